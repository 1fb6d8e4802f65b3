import { createHash, hash } from 'node:crypto';

export type SmsLimits = { perMinute: number; perHour: number; perDay: number };

const CHINA_OFFSET_MS = 8 * 3_600_000;

/**
 * Per-number limits count sends in fixed calendar windows: the minute, the hour, and the day in
 * China time (UTC+8), not sliding ones. The gateway does not document its own rule.
 */
export const LIMIT_WINDOWS: Array<{ limit: keyof SmsLimits; name: string; label: string; sizeMs: number; offsetMs: number }> = [
	{ limit: 'perMinute', name: 'minute', label: 'this calendar minute', sizeMs: 60_000, offsetMs: 0 },
	{ limit: 'perHour', name: 'hour', label: 'this calendar hour', sizeMs: 3_600_000, offsetMs: 0 },
	{ limit: 'perDay', name: 'day', label: 'this calendar day (China time)', sizeMs: 86_400_000, offsetMs: CHINA_OFFSET_MS },
];

/** A signature or template create repeated by another execution of the node within this time is skipped. */
export const CHANGE_REPEAT_WINDOW_MINUTES = 24 * 60;

/**
 * What the records decided for one send: send it; skip it (another execution sent the message
 * within the repeat window); refuse it (a per-number limit); or hand back what an earlier try of
 * this very item (same execution, node, run index and item) left: sent, or outcome unknown.
 */
export type SendDecision =
	| { kind: 'send' }
	| { kind: 'repeat' }
	| { kind: 'limit'; problem: string }
	| { kind: 'earlier'; taskId?: string | null; outcome: 'sent' | 'unknown' };

/**
 * A claim's answer: send now, another execution started the message (it sends it), a per-number
 * limit is full, or the claim's gate stopped it (then nothing was written for it).
 */
export type ClaimAnswer<Stop = never> = 'go' | 'taken' | { limit: string } | { stopped: Stop };

/**
 * What else decides, in a claim's own update, whether the message may leave now (the send step's
 * guards, message/send/leaving.ts): keys read with the claim, and from their values and the
 * store's time why not (undefined: it may leave). Pure, as every decision of an update.
 */
export interface ClaimGate<Stop> {
	keys: string[];
	stop(value: (key: string) => string | undefined, now: number): Stop | undefined;
}

// Stryker disable next-line EqualityOperator,ConditionalExpression: names are unique (none compare equal), and a comparison answering 0 for "after" still sorts ascending; a test pins the fingerprints
const sortedEntries = (object: Record<string, unknown> = {}) => Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The same message always gives the same fingerprint; the store keeps only hashes of it anyway. */
export function messageFingerprint(parts: { account: string; phone: string; signId: number; templateId: number; params?: Record<string, unknown> }): string {
	return fingerprint([parts.account, parts.phone, parts.signId, parts.templateId, sortedEntries(parts.params)]);
}

/** The same change (account, operation and fields) always gives the same fingerprint. */
export function changeFingerprint(account: string, operation: string, params: Record<string, unknown>): string {
	return fingerprint([account, operation, sortedEntries(params)]);
}

/** SHA-256 in hex at one call (crypto.hash, Node 20.12 on; createHash before): the same digest in a third of the time. */
const sha256Hex = (text: string): string => (typeof hash === 'function' ? hash('sha256', text, 'hex') : createHash('sha256').update(text).digest('hex'));

function fingerprint(parts: unknown[]): string {
	return sha256Hex(JSON.stringify(parts)).slice(0, 32);
}

/** One calendar window a send to a number counts in, at one instant. */
export interface CountWindow {
	name: string;
	label: string;
	/** How many sends the node allows in it. */
	allowed: number;
	/** Which window since the epoch, e.g. the minute number. */
	number: number;
	/** When it ends (epoch ms): its count can be forgotten after. */
	endsAt: number;
}

export function countWindows(limits: SmsLimits | undefined, phone: string | undefined, now: number): CountWindow[] {
	if (!limits || phone === undefined) return [];
	return LIMIT_WINDOWS.map((window) => {
		const number = Math.floor((now + window.offsetMs) / window.sizeMs);
		return { name: window.name, label: window.label, allowed: limits[window.limit], number, endsAt: (number + 1) * window.sizeMs - window.offsetMs };
	});
}

export function limitProblem(phone: string | undefined, window: CountWindow): string {
	return `would be message ${window.allowed + 1} to ${phone} in ${window.label}; this node allows ${window.allowed}`;
}
