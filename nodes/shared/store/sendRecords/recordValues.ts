import type { StoreWrite } from '../durableStore';
import { groupedKey, valueTag } from '../keyName';
import { LIMIT_WINDOWS } from './rules';

/**
 * What the send records keep in the durable store, and how it is read back. Every value is
 * checked as it is read: a value of another shape is an error (the send stops as "not sent"), never
 * a guess that could send twice or drop a message.
 *
 * Three kinds of key, all under one node (workflow and node ID), in two groups (groupedKey: the
 * SQLite store keeps a group's rows side by side, so a batch's reserve writes few pages):
 * - a send: one item of one run of one execution (`sms-send|node|execution|run>item`, grouped by
 *   the run), in one of the states below; released means the key is gone;
 * - a message (`sms-number|node|number>sms-message|fingerprint`), kept for the repeat window (while
 *   a send of it is only reserved, for a day): each of its sends (holders) with their state, the
 *   counts they took, their run's token and execution, and when they were started or sent.
 *   Nodes with a window of 0 keep theirs apart (`…>sms-message|no window|fingerprint`), as long as a
 *   send record: it guards nothing, it only lets another execution take over a crashed run's reservations;
 * - a count (`sms-number|node|number>sms-count|window|window number`): messages to a number in a
 *   calendar window, a whole number, kept until the window ends.
 * Messages and counts are grouped by number (a signature or template change, which has none, by node).
 */
export const sendKeyOf = (node: string, execution: string, runIndex: number, itemIndex: number) => groupedKey(`sms-send|${node}|${execution}|${runIndex}`, String(itemIndex));
const numberGroup = (node: string, phone: string | undefined) => `sms-number|${node}|${phone ?? ''}`;
export const messageKeyOf = (node: string, phone: string | undefined, fingerprint: string) => groupedKey(numberGroup(node, phone), `sms-message|${fingerprint}`);
export const countKeyOf = (node: string, phone: string | undefined, window: { name: string; number: number }) =>
	groupedKey(numberGroup(node, phone), `sms-count|${window.name}|${window.number}`);
/** The kind of a record's key, for errors: `sms-send`, `sms-message` or `sms-count`. */
const kindOf = (key: string) => /sms-(send|message|count)/.exec(key)?.[0] ?? 'a key';

/**
 * reserved: decided before the batch, not started; another execution may take it over.
 * unknown: the paid call was started (written before it): it may have gone out.
 * sent: the gateway took it; `taskId` is its task (null when its answer carried none).
 */
export type SendState = 'reserved' | 'unknown' | 'sent';

export interface SendRecord {
	state: SendState;
	/** Names the node run that wrote it: only that run may move it on or release it. */
	token: string;
	/** The count keys this send took, given back when it is released: as tags (valueTag; plain keys in records written before tags). */
	counted: string[];
	taskId?: string | null;
}

/** One send of a message: its state, the counts it took, and (in records written since claims take back) its run's token and execution. */
export interface Holder {
	state: SendState;
	counted: string[];
	token?: string;
	execution?: string;
	/** When it was started or sent (the store's time, ms): the repeat window counts from the last. Absent on a reservation. */
	at?: number;
}

export interface MessageRecord {
	/** The execution that took the message last; a holder without its own execution is of this one. */
	execution: string;
	holders: Record<string, Holder>;
}

export class UnreadableRecord extends Error {
	constructor(key: string, problem: string) {
		super(`a send record (${kindOf(key)}) ${problem}`);
		this.name = 'UnreadableRecord';
	}
}

/** A decision needed a key its update did not name (a claim's first try names no counts). */
export class UnnamedKey extends Error {
	constructor(key: string) {
		super(`A send-records decision read ${kindOf(key)}, which its update did not name`);
		this.name = 'UnnamedKey';
	}
}

const unreadable = (key: string, problem: string) => new UnreadableRecord(key, problem);

const STATES: readonly string[] = ['reserved', 'unknown', 'sent'];
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((entry) => typeof entry === 'string');

function parseObject(key: string, value: string): Record<string, unknown> {
	let parsed: unknown;
	try {
		parsed = JSON.parse(value);
	} catch {
		throw unreadable(key, 'is not JSON');
	}
	if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw unreadable(key, 'is not an object');
	return parsed as Record<string, unknown>;
}

export function readSend(key: string, value: string | undefined): SendRecord | undefined {
	if (value === undefined) return undefined;
	const record = parseObject(key, value);
	const { state, token, counted, taskId } = record;
	if (typeof state !== 'string' || !STATES.includes(state) || typeof token !== 'string' || !isStringList(counted)) throw unreadable(key, 'has an unexpected shape');
	if (taskId !== undefined && taskId !== null && typeof taskId !== 'string') throw unreadable(key, 'has a task ID that is not text');
	return { state: state as SendState, token, counted, ...(taskId === undefined ? {} : { taskId }) };
}

export function readMessage(key: string, value: string | undefined): MessageRecord | undefined {
	if (value === undefined) return undefined;
	const { execution, holders } = parseObject(key, value);
	if (typeof execution !== 'string' || !holders || typeof holders !== 'object' || Array.isArray(holders)) throw unreadable(key, 'has an unexpected shape');
	for (const holder of Object.values(holders as Record<string, unknown>)) {
		const { state, counted, token, execution: holderExecution, at } = (holder ?? {}) as Record<string, unknown>;
		if (typeof state !== 'string' || !STATES.includes(state) || !isStringList(counted)) throw unreadable(key, 'has a holder of an unexpected shape');
		if ([token, holderExecution].some((value) => value !== undefined && typeof value !== 'string')) throw unreadable(key, 'has a holder of an unexpected shape');
		if (at !== undefined && !Number.isFinite(at)) throw unreadable(key, 'has a holder of an unexpected shape');
	}
	return { execution, holders: holders as MessageRecord['holders'] };
}

export function readCount(key: string, value: string | undefined): number {
	if (value === undefined) return 0;
	if (!/^\d{1,9}$/.test(value)) throw unreadable(key, 'is not a count');
	return Number(value);
}

/** A count outlives its window by this much, so that a late release still finds it. */
export const COUNT_GRACE_MS = 60_000;

/** When the window of a count key ends (its last two parts name the window and its number). */
export function countEndsAt(key: string): number {
	const parts = key.split('|');
	const window = LIMIT_WINDOWS.find((candidate) => candidate.name === parts[parts.length - 2]);
	const number = Number(parts[parts.length - 1]);
	if (!window || !Number.isInteger(number)) throw unreadable(key, 'names no window');
	return (number + 1) * window.sizeMs - window.offsetMs;
}

/**
 * The values of one update as the deciders change them: reads see earlier changes of the same
 * update (two items of a batch to one number), and only changed keys are written, each with the
 * number it is about (`phones`: StoreWrite.phone, so that erasing the number finds it).
 */
export class StagedValues {
	private readonly values = new Map<string, string | undefined>();
	private readonly changed = new Map<string, number | undefined>();
	/** The update's keys by their tag (valueTag): what a `counted` list names. Made when first asked (a keyed hash per key). */
	private byTag?: Map<string, string>;

	constructor(
		keys: readonly string[],
		values: ReadonlyArray<string | undefined>,
		readonly now: number,
		private readonly phones: ReadonlyMap<string, string> = new Map(),
	) {
		keys.forEach((key, index) => this.values.set(key, values[index]));
	}

	/**
	 * The keys of this update that a `counted` list names: by tag, or by the key itself (records
	 * written before counted lists held tags). A key this update does not name is left out: it is
	 * a count of a window that has ended, which limits nothing any more.
	 */
	taggedKeys(tags: readonly string[]): string[] {
		const byTag = (this.byTag ??= new Map([...this.values.keys()].map((key) => [valueTag(key), key])));
		return tags.flatMap((tag) => byTag.get(tag) ?? (this.values.has(tag) ? [tag] : []));
	}

	has(key: string): boolean {
		return this.values.has(key);
	}

	send(key: string): SendRecord | undefined {
		return readSend(key, this.get(key));
	}

	message(key: string): MessageRecord | undefined {
		return readMessage(key, this.get(key));
	}

	count(key: string): number {
		return readCount(key, this.get(key));
	}

	setSend(key: string, record: SendRecord | undefined, ttlMs: number) {
		this.set(key, record && JSON.stringify(record), ttlMs);
	}

	setMessage(key: string, record: MessageRecord | undefined, ttlMs: number) {
		this.set(key, record && Object.keys(record.holders).length > 0 ? JSON.stringify(record) : undefined, ttlMs);
	}

	/** Moves a count by `by`; a count at 0 is deleted, and never goes below 0. */
	addToCount(key: string, by: number) {
		const next = Math.max(0, this.count(key) + by);
		this.set(key, next === 0 ? undefined : String(next), countEndsAt(key) - this.now + COUNT_GRACE_MS);
	}

	/** The key's value as the decisions have left it: what the update writes, or what it read. */
	current(key: string): string | undefined {
		return this.get(key);
	}

	private get(key: string): string | undefined {
		if (!this.values.has(key)) throw new UnnamedKey(key);
		return this.values.get(key);
	}

	private set(key: string, value: string | undefined, ttlMs: number) {
		this.get(key);
		this.values.set(key, value);
		this.changed.set(key, Math.max(1, ttlMs));
	}

	writes(): StoreWrite[] {
		return [...this.changed].map(([key, ttlMs]) => {
			const value = this.values.get(key);
			const phone = this.phones.get(key);
			if (value === undefined) return { key, value: null };
			return phone === undefined ? { key, value, ttlMs } : { key, value, ttlMs, phone };
		});
	}
}
