import { createHash, timingSafeEqual } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

import { cidrContains, parseAddress, parseAllowList, type CidrRange } from '../shared/checks/network';
import { CALLBACK_EVENT_HEADER, CALLBACK_EVENT_HEADER_VALUE } from '../shared/gateway/catalog';

/** The HTTP answer to a callback that starts nothing. */
export interface Rejection {
	status: 400 | 401 | 403;
	reason: string;
}

/** The user's checks, read once per request from the node's Security collection. */
export interface CallbackGuard {
	allowedRanges: CidrRange[];
	token: string;
	headerName: string;
	headerValue: string;
}

/** A Security setting that cannot work as entered: the field to fix and what is wrong. */
export interface GuardProblem {
	field: string;
	problem: string;
	fix: string;
}

export function readGuard(security: IDataObject): CallbackGuard | GuardProblem {
	const { ranges, invalid } = parseAllowList(String(security.allowedIps ?? ''));
	if (invalid.length > 0) {
		return {
			field: 'Allowed Source IPs',
			problem: `${invalid.map((entry) => `"${entry}"`).join(', ')} is not an IP address or CIDR range`,
			fix: 'Use entries like 203.0.113.7, 203.0.113.0/24 or 2001:db8::/32, separated by commas',
		};
	}
	// Version 1.1 keeps the header as one pair (security.header.pair); version 1 as two fields.
	const pair = ((security.header as IDataObject | undefined)?.pair ?? {}) as IDataObject;
	const headerName = String(pair.name ?? security.headerName ?? '').trim();
	const headerValue = String(pair.value ?? security.headerValue ?? '');
	// Either half alone would silently let every request through.
	if (headerName && !headerValue) {
		return { field: 'Header Value', problem: 'is empty while Header Name is set', fix: 'Enter the secret value the header must carry' };
	}
	if (headerValue && !headerName) {
		return { field: 'Header Name', problem: 'is empty while Header Value is set', fix: 'Enter the name of the header that carries the value' };
	}
	return { allowedRanges: ranges, token: String(security.token ?? ''), headerName, headerValue };
}

/** Compares secrets in constant time whatever their lengths: both sides are hashed to 32 bytes first. */
function sameSecret(given: string, expected: string): boolean {
	const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
	return timingSafeEqual(digest(given), digest(expected));
}

function firstValue(value: unknown): string | undefined {
	if (Array.isArray(value)) return value.length > 0 ? String(value[0]) : undefined;
	return value === undefined || value === null ? undefined : String(value);
}

/** Source address first (403), then the secrets (401), then the gateway's own event header (400). */
export function rejectRequest(
	guard: CallbackGuard,
	request: { sourceAddress: string | undefined; query: IDataObject; headers: IDataObject },
): Rejection | undefined {
	if (guard.allowedRanges.length > 0) {
		const source = parseAddress(request.sourceAddress ?? '');
		if (!source || !guard.allowedRanges.some((range) => cidrContains(range, source))) {
			return { status: 403, reason: 'source address not allowed' };
		}
	}
	if (guard.token && !sameSecret(firstValue(request.query.token) ?? '', guard.token)) {
		return { status: 401, reason: 'missing or wrong token' };
	}
	if (guard.headerName) {
		const given = firstValue(request.headers[guard.headerName.toLowerCase()]);
		if (given === undefined || !sameSecret(given, guard.headerValue)) {
			return { status: 401, reason: `missing or wrong ${guard.headerName} header` };
		}
	}
	const eventHeader = firstValue(request.headers[CALLBACK_EVENT_HEADER]);
	if (eventHeader !== undefined && eventHeader.trim().toLowerCase() !== CALLBACK_EVENT_HEADER_VALUE) {
		return { status: 400, reason: `${CALLBACK_EVENT_HEADER} header is not "${CALLBACK_EVENT_HEADER_VALUE}"` };
	}
	return undefined;
}

/** What n8n hands a typeVersion 1 webhook node: its parse of the body, and the raw bytes it read. */
export interface BodySource {
	parsed: unknown;
	rawBody?: Buffer;
}

/**
 * The callback body as a JSON object. n8n parses `application/json` itself (and answers 422 to
 * malformed JSON before any node runs); other content types arrive as text, or unparsed with the
 * raw bytes beside them, so those are parsed here.
 */
export function readCallbackBody(source: BodySource): { body: IDataObject } | Rejection {
	let parsed = source.parsed;
	const isEmptyObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length === 0;
	// Older n8n versions hand over {} instead of undefined when they did not parse the body.
	if (parsed === undefined || parsed === null || isEmptyObject || typeof parsed === 'string') {
		const text = typeof parsed === 'string' ? parsed : (source.rawBody?.toString('utf8') ?? '');
		if (text.trim() === '') return { status: 400, reason: 'body is empty; expected a JSON object' };
		try {
			parsed = JSON.parse(text);
		} catch {
			return { status: 400, reason: 'body is not valid JSON' };
		}
	}
	if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
		return { status: 400, reason: 'body must be a JSON object' };
	}
	return { body: parsed as IDataObject };
}

/** The most of a rejected body handed to the workflow: enough to see a format change, bounded. */
export const REJECTED_BODY_MAX_CHARS = 16_384;

/** Values quoted from the body (a phone, a text) are left out of log lines; the field's path stays. */
export function reasonForLog(reason: string): string {
	return reason.replace(/\s*"[^"]*"/g, '');
}

/** The action the body names, shortened, for a log line or the rejected event. */
export function actionOf(body: unknown): string | undefined {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
	const action = (body as IDataObject).action;
	if (action === undefined || action === null) return undefined;
	const text = typeof action === 'string' ? action : JSON.stringify(action);
	return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/**
 * The item a rejected callback starts the workflow with, when the user asked for rejected events:
 * marked rejected, with the reason and the raw body (text, cut at REJECTED_BODY_MAX_CHARS).
 */
export function rejectedEvent(rejection: Rejection, source: BodySource, action: string | undefined): IDataObject {
	const raw =
		source.rawBody && source.rawBody.length > 0
			? source.rawBody.toString('utf8')
			: typeof source.parsed === 'string'
				? source.parsed
				: source.parsed === undefined
					? ''
					: JSON.stringify(source.parsed);
	return {
		event: 'rejected',
		rejected: true,
		reason: rejection.reason,
		httpStatus: rejection.status,
		action: action ?? null,
		rawBody: raw.slice(0, REJECTED_BODY_MAX_CHARS),
		rawBodyChars: raw.length,
		rawBodyTruncated: raw.length > REJECTED_BODY_MAX_CHARS,
		receivedAt: new Date().toISOString(),
	};
}
