/** Replaces every form in which a secret can appear in text (raw, URL-encoded) with a mask. */
export const REDACTED = '[redacted]';

export function redactSecret(text: string, secret: string | undefined): string {
	if (!secret || !text) return text;
	let result = text;
	for (const form of new Set([secret, encodeURIComponent(secret), encodeURI(secret)])) {
		result = result.split(form).join(REDACTED);
	}
	return result;
}
