/** Replaces every form in which a secret can appear in text (raw, URL-encoded) with a mask. */
export const REDACTED = '[redacted]';

/** A cut (by the gateway, a proxy or a length limit) can leave this much of the secret at its edge. */
const MIN_FRAGMENT = 6;

function formsOf(secret: string): string[] {
	const forms = new Set([secret, encodeURIComponent(secret), encodeURI(secret), new URLSearchParams({ s: secret }).toString().slice(2)]);
	return [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
}

/**
 * Masks the secret whole, and any piece of it of 6 or more characters that a cut left at its
 * start or end (in every encoding): an echoed `...&appCode=` or `Authorization: AppCode ...`
 * shortened somewhere must not leave most of the code readable.
 */
export function redactSecret(text: string, secret: string | undefined): string {
	if (!secret || !text) return text;
	const forms = formsOf(secret);
	let result = text;
	for (const form of forms) result = result.split(form).join(REDACTED);
	// Longest pieces first across all encodings, so a short piece of one form cannot hide a longer one of another.
	for (let length = forms[0].length - 1; length >= MIN_FRAGMENT; length--) {
		for (const form of forms) {
			if (length >= form.length) continue;
			const head = form.slice(0, length);
			if (result.includes(head)) result = result.split(head).join(REDACTED);
			const tail = form.slice(form.length - length);
			if (result.includes(tail)) result = result.split(tail).join(REDACTED);
		}
	}
	return result;
}

/**
 * The appCodes of the clients made in this process, so that texts made away from the client (an
 * error of any item, a log line) can be redacted too. Bounded: the oldest are dropped first.
 */
const knownSecrets = new Set<string>();
const MAX_KNOWN_SECRETS = 100;

export function rememberSecret(secret: string) {
	if (!secret) return;
	knownSecrets.delete(secret);
	knownSecrets.add(secret);
	if (knownSecrets.size > MAX_KNOWN_SECRETS) knownSecrets.delete(knownSecrets.values().next().value as string);
}

export function redactKnownSecrets(text: string): string {
	let result = text;
	for (const secret of knownSecrets) result = redactSecret(result, secret);
	return result;
}
