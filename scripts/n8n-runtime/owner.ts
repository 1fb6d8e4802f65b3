/**
 * The owner account, so the editor of a fresh instance opens on a login instead of the setup form.
 * Same REST calls on n8n 2.41 and 1.123: POST /rest/owner/setup (open only until an owner
 * exists) and POST /rest/login. Both answer with an `n8n-auth` session cookie.
 */

export interface OwnerAccount {
	email: string;
	/** 8 to 64 characters with at least one digit and one capital letter, or n8n refuses it. */
	password: string;
	firstName: string;
	lastName: string;
}

/**
 * No `browser-id` header is sent: n8n then leaves the browser binding out of the session token,
 * so the cookie alone authorises later REST calls from scripts. (A token minted with a browser-id
 * is refused on most /rest routes unless the same header comes with every request.)
 */
function sessionCookie(response: Response): string {
	const cookie = response.headers
		.getSetCookie()
		.map((header) => header.split(';')[0])
		.find((pair) => pair.startsWith('n8n-auth='));
	if (!cookie) throw new Error(`n8n answered ${response.status} without a session cookie`);
	return cookie;
}

/** Logs an existing user in; returns the session cookie (`n8n-auth=…`). */
export async function loginOwner(url: string, account: Pick<OwnerAccount, 'email' | 'password'>): Promise<string> {
	const response = await fetch(`${url}/rest/login`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		// Both lines name the field this way (it also takes an LDAP login id).
		body: JSON.stringify({ emailOrLdapLoginId: account.email, password: account.password }),
	});
	if (!response.ok) throw new Error(`login as ${account.email} answered ${response.status}: ${await response.text()}`);
	return sessionCookie(response);
}

/**
 * Creates the owner of a fresh instance and returns its session cookie. On an instance that
 * already has an owner it logs in with the same account instead, so a reused user folder works;
 * to replace a different owner, run resetUserManagement() first.
 */
export async function setupOwner(url: string, owner: OwnerAccount): Promise<string> {
	const response = await fetch(`${url}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ email: owner.email, password: owner.password, firstName: owner.firstName, lastName: owner.lastName }),
	});
	if (response.ok) return sessionCookie(response);
	const text = await response.text();
	if (response.status === 400 && /already set ?up/i.test(text)) return await loginOwner(url, owner);
	throw new Error(`owner setup answered ${response.status}: ${text}`);
}
