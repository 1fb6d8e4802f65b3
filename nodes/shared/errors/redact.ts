/** Replaces every form in which a secret can appear in text (raw, URL-encoded) with a mask. */
export const REDACTED = '[redacted]';

/** A cut (by the gateway, a proxy or a length limit) can leave this much of the secret at its edge. */
const MIN_FRAGMENT = 6;

function formsOf(secret: string): string[] {
	const forms = new Set([secret, encodeURIComponent(secret), encodeURI(secret), new URLSearchParams({ s: secret }).toString().slice(2)]);
	// No form is empty: redactSecret returns before asking for an empty code's.
	return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Where an appCode is written by name, its value goes whatever it is or how short a cut left it: the
 * query parameter (`appCode=…`, also as JSON `"appCode":"…"`) and the header (`Authorization: AppCode …`) that
 * docs/gateway-api.md describes. Values stop at characters that end a parameter, a header or a JSON
 * string, so the text around them (and JSON holding them) stays as it was.
 */
const NAMED_APP_CODE = [
	/(\bappCode=)[^&\s"'\\<>#]+/gi,
	// Anchored on the header's name: a gateway message such as "AppCode is invalid" stays readable.
	/(\bauthorization["']?\s*[:=]\s*["']?AppCode[ \t]+)[^\s"'\\<>&,;]+/gi,
	/("appCode"\s*:\s*")[^"\\]+/gi,
];

function redactNamedAppCode(text: string): string {
	let result = text;
	for (const pattern of NAMED_APP_CODE) result = result.replace(pattern, (_match, name: string) => `${name}${REDACTED}`);
	return result;
}

/**
 * Masks the secret whole, every value written as an appCode, and any piece of the secret of 6 or
 * more characters that a cut left at its start or end (in every encoding): an echoed `...&appCode=`
 * or `Authorization: AppCode ...` shortened somewhere must not leave part of the code readable.
 */
export function redactSecret(text: string, secret: string | undefined): string {
	// Stryker disable next-line ConditionalExpression: empty text comes out empty anyway (a shortcut)
	if (!text) return text;
	if (!secret) return redactNamedAppCode(text);
	const forms = formsOf(secret);
	let result = text;
	for (const form of forms) result = result.split(form).join(REDACTED);
	// Longest pieces first across all encodings, so a short piece of one form cannot hide a longer one of another.
	// Stryker disable next-line ArithmeticOperator: pieces as long as a whole form are gone already (masked above)
	for (let length = forms[0].length - 1; length >= MIN_FRAGMENT; length--) {
		for (const form of forms) {
			// Stryker disable next-line EqualityOperator: a piece as long as the form is the whole form, masked above
			if (length >= form.length) continue;
			const head = form.slice(0, length);
			// Stryker disable next-line ConditionalExpression: splitting on a text that is not there changes nothing (the check saves the copy)
			if (result.includes(head)) result = result.split(head).join(REDACTED);
			const tail = form.slice(form.length - length);
			// Stryker disable next-line ConditionalExpression: splitting on a text that is not there changes nothing (the check saves the copy)
			if (result.includes(tail)) result = result.split(tail).join(REDACTED);
		}
	}
	// Last: the pieces above are cut out by their whole length before a name-based mask could split them.
	return redactNamedAppCode(result);
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
	if (knownSecrets.size === 0) return redactNamedAppCode(text);
	let result = text;
	for (const secret of knownSecrets) result = redactSecret(result, secret);
	return result;
}
