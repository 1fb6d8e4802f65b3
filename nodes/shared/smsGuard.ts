import { createHash } from 'node:crypto';

import { recordsClock, type NodeRecords } from './state';

export type SmsLimits = { perMinute: number; perHour: number; perDay: number };

const CHINA_OFFSET_MS = 8 * 3_600_000;

/**
 * Per-number limits count sends in fixed calendar windows: the minute, the hour, and the day in
 * China time (UTC+8), not sliding ones. The gateway does not document its own rule.
 */
const LIMIT_WINDOWS: Array<{ limit: keyof SmsLimits; name: string; label: string; sizeMs: number; offsetMs: number }> = [
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

/**
 * SMS sends (and signature and template changes, with the repeat window only) recorded across executions in the node's records (n8n's processed-data store):
 * - the repeat window: `sms-repeat|<message>|<bucket length>|<bucket>` for the bucket of the send,
 *   with buckets of a tenth of the window; a send is a repeat when one of the last 10 buckets holds
 *   the message and this execution did not record it itself (`sms-execution|<execution>|<message>`),
 *   so loops within one execution send again;
 * - the per-number limits: `sms-slot|<phone>|<window>|<window number>|<k>`, k = 1..limit; a send
 *   takes the first free slot of each window and is refused when a window has none.
 * Values are recorded before the send; an item's values are removed only when its send certainly
 * failed or never started, so an unknown outcome keeps counting.
 */
export class SmsSendRecords {
	/** Which items hold each recorded value: a value shared by two items stays until both let go. */
	private readonly holders = new Map<string, Set<number>>();
	private readonly held = new Map<number, string[]>();

	constructor(
		private readonly records: NodeRecords,
		private readonly executionId: string,
		/** Undefined for changes: only the repeat window applies. */
		private readonly limits: SmsLimits | undefined,
		private readonly repeatWindowMinutes: number,
	) {}

	get acrossRestarts(): boolean {
		return this.records.acrossRestarts;
	}

	private repeatValues(message: string, now: number): string[] {
		if (this.repeatWindowMinutes <= 0) return [];
		const bucketMs = Math.max(1, Math.round((this.repeatWindowMinutes * 60_000) / REPEAT_BUCKETS));
		const current = Math.floor(now / bucketMs);
		return Array.from({ length: REPEAT_BUCKETS }, (_, back) => `sms-repeat|${message}|${bucketMs}|${current - back}`);
	}

	private slotValues(phone: string | undefined, now: number): Array<{ window: (typeof LIMIT_WINDOWS)[number]; slots: string[] }> {
		const limits = this.limits;
		if (!limits || phone === undefined) return [];
		return LIMIT_WINDOWS.map((window) => {
			const number = Math.floor((now + window.offsetMs) / window.sizeMs);
			const slots = Array.from({ length: limits[window.limit] }, (_, k) => `sms-slot|${phone}|${window.name}|${number}|${k + 1}`);
			return { window, slots };
		});
	}

	/**
	 * Decides every send of a run in item order with one read-and-record of the store, then gives
	 * back what it recorded but did not need.
	 */
	async reserve(sends: GuardedSend[], now = recordsClock.now()): Promise<Map<number, SendDecision>> {
		const decisions = new Map<number, SendDecision>();
		if (sends.length === 0) return decisions;
		const asked = new Set<string>();
		const plans = sends.map((send) => {
			const repeat = this.repeatValues(send.message, now);
			const marker = repeat.length > 0 ? `sms-execution|${this.executionId}|${send.message}` : undefined;
			const windows = this.slotValues(send.phone, now);
			for (const value of [...repeat, ...(marker ? [marker] : []), ...windows.flatMap((window) => window.slots)]) asked.add(value);
			return { send, repeat, marker, windows };
		});
		const { before } = await this.records.checkAndRecord([...asked]);
		const newlyRecorded = [...asked].filter((value) => !before.has(value));
		const taken = new Set<string>();

		for (const { send, repeat, marker, windows } of plans) {
			const seenBefore = repeat.some((value) => before.has(value));
			if (seenBefore && marker && !before.has(marker)) {
				decisions.set(send.itemIndex, { kind: 'repeat' });
				continue;
			}
			const chosen: string[] = [];
			let problem: string | undefined;
			for (const { window, slots } of windows) {
				const free = slots.find((slot) => !before.has(slot) && !taken.has(slot));
				if (!free) {
					const allowed = (this.limits as SmsLimits)[window.limit];
					problem = `would be message ${allowed + 1} to ${send.phone} in ${window.label}; this node allows ${allowed}`;
					break;
				}
				chosen.push(free);
			}
			if (problem) {
				decisions.set(send.itemIndex, { kind: 'limit', problem });
				continue;
			}
			for (const slot of chosen) taken.add(slot);
			this.hold(send.itemIndex, [...chosen, ...(repeat.length > 0 ? [repeat[0], marker as string] : [])].filter((value) => !before.has(value)));
			decisions.set(send.itemIndex, { kind: 'send' });
		}
		await this.records.remove(newlyRecorded.filter((value) => !this.holders.has(value)));
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

	/** Lets go of the items' records: their sends certainly failed or never started. */
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
		await this.records.remove(unused);
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
