import { createHash } from 'node:crypto';

import { recordsClock } from '../../state/executionMemory';

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

/** The repeat window is checked in 10 time buckets, so it is precise to a tenth of its length. */
export const REPEAT_BUCKETS = 10;

/** One send (or change) the guard decides on. */
export interface GuardedSend {
	itemIndex: number;
	/** The number, for the per-number limits; absent for signature and template changes. */
	phone?: string;
	/** The message (account, number, signature, template and variables), or the change. */
	message: string;
}

/** A signature or template create repeated by another execution of the node within this time is skipped. */
export const CHANGE_REPEAT_WINDOW_MINUTES = 24 * 60;

export type SendDecision = { kind: 'send' } | { kind: 'repeat' } | { kind: 'limit'; problem: string };

const sortedEntries = (object: Record<string, unknown> = {}) => Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The same message always gives the same fingerprint; the store keeps only hashes of it anyway. */
export function messageFingerprint(parts: { account: string; phone: string; signId: number; templateId: number; params?: Record<string, unknown> }): string {
	return fingerprint([parts.account, parts.phone, parts.signId, parts.templateId, sortedEntries(parts.params)]);
}

/** The same change (account, operation and fields) always gives the same fingerprint. */
export function changeFingerprint(account: string, operation: string, params: Record<string, unknown>): string {
	return fingerprint([account, operation, sortedEntries(params)]);
}

function fingerprint(parts: unknown[]): string {
	return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
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

/** What a store decided for one send, and what the send holds until it is released (names only the store reads). */
export interface StoreDecision {
	decision: SendDecision;
	/** Held by a send: given back to the store's release when no item holds it any more. */
	holds: string[];
}

/**
 * Where the records live: Redis (atomic across processes) or n8n's database (serialised in this
 * process). A store decides every send of a run in item order, exactly as one process would.
 */
export interface SendRecordStore {
	/** The records outlive a restart of n8n. */
	readonly acrossRestarts: boolean;
	/** Two processes deciding at once get the answer one process would. */
	readonly acrossProcesses: boolean;
	/** Where the records are, for error messages: "Redis at host:port", "n8n's database". */
	readonly where: string;
	reserve(sends: GuardedSend[], now: number): Promise<Map<number, StoreDecision>>;
	/** Gives back holds no item needs any more: their sends certainly failed or never started. */
	release(holds: string[]): Promise<void>;
}

/**
 * An SMS node run's records across executions (and signature and template creates, with the
 * repeat window only). The store decides; this class remembers which item holds what, so that a
 * record shared by two items (the same message twice in one run) stays until both let go. A
 * record is taken before the send and given back only when the send certainly failed or never
 * started, so an unknown outcome keeps counting.
 */
export class SmsSendRecords {
	private readonly holders = new Map<string, Set<number>>();
	private readonly held = new Map<number, string[]>();

	constructor(private readonly store: SendRecordStore) {}

	get acrossRestarts(): boolean {
		return this.store.acrossRestarts;
	}

	get acrossProcesses(): boolean {
		return this.store.acrossProcesses;
	}

	get where(): string {
		return this.store.where;
	}

	/** Decides every send of a run in item order. */
	async reserve(sends: GuardedSend[], now = recordsClock.now()): Promise<Map<number, SendDecision>> {
		const decisions = new Map<number, SendDecision>();
		if (sends.length === 0) return decisions;
		for (const [itemIndex, { decision, holds }] of await this.store.reserve(sends, now)) {
			decisions.set(itemIndex, decision);
			if (decision.kind === 'send') this.hold(itemIndex, holds);
		}
		return decisions;
	}

	private hold(itemIndex: number, values: string[]) {
		this.held.set(itemIndex, values);
		for (const value of values) {
			let items = this.holders.get(value);
			if (!items) this.holders.set(value, (items = new Set()));
			items.add(itemIndex);
		}
	}

	/**
	 * Lets go of the items' records: their sends certainly failed or never started. A store that
	 * cannot be reached keeps them, which only counts a send too many: the safe side.
	 */
	async release(itemIndexes: number[]): Promise<void> {
		const unused: string[] = [];
		for (const itemIndex of itemIndexes) {
			for (const value of this.held.get(itemIndex) ?? []) {
				const items = this.holders.get(value);
				items?.delete(itemIndex);
				if (items && items.size === 0) {
					this.holders.delete(value);
					unused.push(value);
				}
			}
			this.held.delete(itemIndex);
		}
		if (unused.length > 0) await this.store.release(unused).catch(() => undefined);
	}

	/** Items that hold records. */
	holding(): number[] {
		return [...this.held.keys()];
	}

	/** Lets go of every item's records but those of `started` items: a failure stopped the batch before the rest began. */
	async releaseAllBut(started: ReadonlySet<number>): Promise<void> {
		await this.release(this.holding().filter((itemIndex) => !started.has(itemIndex)));
	}
}
