/**
 * Redaction at its edges (errors/redact.ts): the shortest piece of the code that is masked, pieces
 * of the longer encodings, and the codes remembered for texts made away from the client.
 * test/unit/transport-pure.test.ts has the common cases; test/transport/appCodeLeaks.test.ts the
 * outputs, errors and logs of whole calls.
 */
import { createHash } from 'node:crypto';

import { REDACTED, redactKnownSecrets, redactSecret, rememberSecret } from '../../nodes/shared/errors/redact';

const secret = 'Zq8+fK29/abXY=secret77';
const forms = [secret, encodeURIComponent(secret), encodeURI(secret), new URLSearchParams({ s: secret }).toString().slice(2)];

/** Every piece of 6 characters of every form of the code that the text still shows. */
const readablePieces = (text: string) => forms.flatMap((form) => [...form].map((_c, start) => form.slice(start, start + 6)).filter((piece) => piece.length === 6 && text.includes(piece)));

describe('redaction of pieces of the code', () => {
	it('masks the code whole in every form, and nothing around it', () => {
		for (const form of forms) expect(redactSecret(`before ${form} after`, secret)).toBe(`before ${REDACTED} after`);
	});

	it('masks a piece of exactly 6 characters cut from its start or its end, and leaves 5 alone', () => {
		expect(redactSecret(`echo: ${secret.slice(0, 6)}|`, secret)).toBe(`echo: ${REDACTED}|`);
		expect(redactSecret(`|${secret.slice(-6)} :echo`, secret)).toBe(`|${REDACTED} :echo`);
		// Five characters could be any text: they stay readable.
		expect(redactSecret(`echo: ${secret.slice(0, 5)}|`, secret)).toBe(`echo: ${secret.slice(0, 5)}|`);
	});

	it('masks a cut of the longest encoding that is longer than the raw code, leaving no piece of it', () => {
		const encoded = encodeURIComponent(secret);
		expect(encoded.length).toBeGreaterThan(secret.length + 4);
		const text = `GET /x?${encoded.slice(0, secret.length + 4)}`;
		const redacted = redactSecret(text, secret);
		expect(readablePieces(redacted)).toEqual([]);
		expect(redacted).toBe(`GET /x?${REDACTED}`);
	});

	it('a code whose forms differ from their first characters (a space, a plus): every form, and every cut of 6 or more characters from its start or end, masked whole', () => {
		const spaced = 'Ab c+/x9 yZ=7';
		// Raw, URL-encoded (%20), encoded as a URL (keeps + and /), form-encoded (+ for the space).
		const spacedForms = [spaced, encodeURIComponent(spaced), encodeURI(spaced), new URLSearchParams({ s: spaced }).toString().slice(2)];
		expect(new Set(spacedForms).size).toBe(4);
		for (const form of spacedForms) {
			expect(redactSecret(`<${form}>`, spaced)).toBe(`<${REDACTED}>`);
			for (let length = 6; length < form.length; length++) {
				expect([redactSecret(`<${form.slice(0, length)}>`, spaced), redactSecret(`<${form.slice(-length)}>`, spaced)]).toEqual([`<${REDACTED}>`, `<${REDACTED}>`]);
			}
		}
	});

	it('leaves empty text and text without the code as they are', () => {
		expect(redactSecret('', secret)).toBe('');
		expect(redactSecret('appCode is required', '')).toBe('appCode is required');
	});
});

describe('codes remembered for texts made away from the client', () => {
	it('masks any value written as an appCode before a code is remembered, then each remembered code', () => {
		expect(redactKnownSecrets('GET /x?appCode=abc123&tel=1')).toBe(`GET /x?appCode=${REDACTED}&tel=1`);
		rememberSecret('');
		expect(redactKnownSecrets('nothing to hide')).toBe('nothing to hide');
		rememberSecret(secret);
		expect(redactKnownSecrets(`failed for ${secret} (${secret.slice(-7)})`)).toBe(`failed for ${REDACTED} (${REDACTED})`);
	});

	it('keeps the last 100 codes, a code remembered again counting as new', () => {
		// Codes that share no piece of 6 characters, so that one's mask cannot hide another's.
		const code = (n: number) => createHash('sha256').update(String(n)).digest('hex').slice(0, 20);
		rememberSecret(code(0));
		for (let n = 1; n < 100; n++) rememberSecret(code(n));
		// Used again: code 0 is now the newest, code 1 the oldest.
		rememberSecret(code(0));
		rememberSecret(code(100));
		expect(redactKnownSecrets(`${code(0)} ${code(2)} ${code(100)}`)).toBe(`${REDACTED} ${REDACTED} ${REDACTED}`);
		// Code 1, the oldest, was dropped.
		expect(redactKnownSecrets(`${code(1)} ${code(2)}`)).toBe(`${code(1)} ${REDACTED}`);
		// An empty code (a credential without one) takes no place: code 2, now the oldest, stays masked.
		rememberSecret('');
		expect(redactKnownSecrets(`${code(2)}`)).toBe(REDACTED);
	});
});
