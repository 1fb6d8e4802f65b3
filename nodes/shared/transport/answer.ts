import type { z } from 'zod/v4';

import { MisshapenAnswer, type GatewayFailure } from '../errors/failures';
import { redactSecret } from '../errors/redact';
import { describeSchemaProblem, envelopeSchema } from '../gateway/schemas/envelope';
import { parseAnswer } from '../gateway/schemas/fastParse';
import type { OperationName } from '../gateway/catalog';
import type { MakeFailure } from './failure';
import { parseRetryAfter } from './retry';

export type Envelope = z.infer<typeof envelopeSchema>;

/**
 * One attempt's outcome: the gateway's envelope, or a failure and whether another attempt may help.
 * `mayBeBilled` is false only when the gateway certainly did not bill it (docs/gateway-api.md: billed
 * only for code 0): it answered with another code, refused the request (4xx), or never got it.
 */
export interface AttemptResult {
	failure?: GatewayFailure;
	retryable: boolean;
	mayBeBilled: boolean;
	envelope?: Envelope;
}

/** A 5xx body that is the gateway's own envelope with a non-zero code: a refusal, not a lost answer. */
function isGatewayRefusal(text: string): boolean {
	try {
		const code = (JSON.parse(text) as { code?: unknown } | null)?.code;
		return typeof code === 'number' && code !== 0;
	} catch {
		return false;
	}
}

export interface GatewayAnswer<T> {
	data: T;
	message: string;
	attempts: number;
}

const RATE_LIMITED_HINT = 'The gateway is rate-limiting this appCode. Lower "Max Requests per Second" in the credential, or run the item again later.';

function looksLikeHtml(text: string) {
	return /^\s*</.test(text);
}

/** Shortens text that has already been redacted: a cut must not leave part of the appCode. */
function shorten(text: string, max = 200) {
	const flat = text.replace(/\s+/g, ' ').trim();
	return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Reads a complete HTTP answer: its status, then its body as JSON, then the envelope around the data. */
export function readHttpAnswer(
	fail: MakeFailure,
	secret: string,
	operation: OperationName,
	statusCode: number,
	responseHeaders: Record<string, string | string[] | undefined>,
	text: string,
): AttemptResult {
	if (statusCode < 200 || statusCode > 299) {
		const retryable = statusCode >= 500 || statusCode === 429;
		const detail = looksLikeHtml(text) ? 'an HTML error page' : shorten(redactSecret(text, secret)) || 'an empty body';
		return {
			retryable,
			// A proxy's 502 or 504 may stand for an answer the gateway gave (and billed) that was lost.
			mayBeBilled: statusCode >= 500 && !isGatewayRefusal(text),
			failure: fail(operation, 'http-status', `the gateway answered HTTP ${statusCode} with ${detail}`, {
				httpStatus: statusCode,
				retryAfterMs: statusCode === 429 ? parseRetryAfter(responseHeaders['retry-after']) : undefined,
				hint:
					statusCode === 429
						? RATE_LIMITED_HINT
						: statusCode >= 500
							? 'The gateway had an internal problem. Try again later.'
							: undefined,
			}),
		};
	}

	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		const what = looksLikeHtml(text)
			? 'an HTML page instead of JSON'
			: text.trim() === ''
				? 'an empty body instead of JSON'
				: 'JSON that is malformed or cut off';
		return {
			retryable: false,
			mayBeBilled: true,
			failure: fail(operation, 'not-json', `the gateway answered HTTP ${statusCode} with ${what}`, {
				httpStatus: statusCode,
				hint: 'Check the Base URL in the credential: it must be the API root. A proxy or captive portal can also answer with an HTML page.',
			}),
		};
	}
	const envelope = parseAnswer(envelopeSchema, json);
	if (!envelope.success) {
		return {
			retryable: false,
			mayBeBilled: true,
			failure: fail(operation, 'schema', `the gateway's answer is not the expected envelope: ${describeSchemaProblem(envelope.error)}`, {
				httpStatus: statusCode,
			}),
		};
	}
	return { retryable: false, mayBeBilled: envelope.data.code === 0, envelope: envelope.data };
}

/** The envelope's code and the operation's data: a refusal throws, billed data that does not fit throws a MisshapenAnswer. */
export function readEnvelope<Schema extends z.ZodType>(
	fail: MakeFailure,
	secret: string,
	operation: OperationName,
	envelope: Envelope,
	schema: Schema,
	attempts: number,
): GatewayAnswer<z.output<Schema>> {
	const message = envelope.message ?? '';
	if (envelope.code !== 0) {
		throw fail(operation, 'gateway-code', message || 'no message', {
			gatewayCode: envelope.code,
			hint: 'The gateway refused the request. Its code and message say why; check the input values and the account.',
		});
	}
	const data = parseAnswer(schema, envelope.data);
	if (!data.success) {
		// Code 0 is a success, and billed: the answer is handed over as sent, never dropped.
		throw new MisshapenAnswer({
			operation,
			problem: redactSecret(describeSchemaProblem(data.error, 'data'), secret),
			data: envelope.data === undefined ? null : JSON.parse(redactSecret(JSON.stringify(envelope.data), secret)),
			gatewayMessage: redactSecret(message, secret),
			hint: 'The gateway may have changed its response format. Report this with the field named above.',
		});
	}
	return { data: data.data, message, attempts };
}
