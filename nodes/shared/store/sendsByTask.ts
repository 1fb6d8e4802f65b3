import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';

import { SMS_TASK_STATUS } from '../gateway/catalog';
import type { DurableStore, StoreWrite } from './durableStore';
import { openDurableStore } from './openStore';

/**
 * Sends by task ID, in the durable store: what an SMS Trigger needs to tie a delivery report to its
 * send (the Reference, the send's workflow and execution), and what Check Pending Deliveries needs
 * to find the sends whose final report never arrived. Per send one record under its task ID, and
 * per credential and minute one list of the task IDs sent in it (the index Check Pending reads).
 * The gateway's task IDs name one task each; the store hashes every key name.
 */

const HOUR_MS = 3_600_000;
/** Records are kept at least this long (or the repeat window, when longer). */
export const KEEP_SENDS_MS = 72 * HOUR_MS;
/** The longest reference kept: a record is read whole by every report, so it stays small. */
export const MAX_REFERENCE_CHARS = 1_000;

export interface SendToRecord {
	taskId: string;
	/** The send's Reference option, or null when it had none. */
	reference: string | null;
	workflowId: string;
	executionId: string;
}

/** Who first saw a task's final status: an SMS Trigger, Send and Check Delivery, or Check Pending Deliveries. */
export type ReportedBy = 'trigger' | 'sendAndCheck' | 'checkPending';

export interface SendRecord extends Partial<SendToRecord> {
	taskId: string;
	/** Store clock, ms since the epoch. Absent on a report that arrived before its send was recorded. */
	sentAt?: number;
	keepUntil: number;
	reportedAt?: number;
	reportedBy?: ReportedBy;
	reportedStatus?: number;
}

/**
 * The store these records live in: the one the SMS Trigger sees. A trigger has no credential, so the
 * SMS node opens the store without its credential too (n8n's queue Redis, the SQLite file, or
 * memory): a credential's Shared Redis URL would put the records where no trigger looks.
 */
export async function openDeliveryStore(ctx: IExecuteFunctions | IWebhookFunctions): Promise<DurableStore> {
	return await openDurableStore(ctx, { withoutCredential: true });
}

const DELIVERY_KEY_PREFIX = 'delivery:';
/** Whether a store key is one of these records (tests count the store's work per kind of record). */
export const isDeliveryKey = (key: string) => key.startsWith(DELIVERY_KEY_PREFIX);

const taskKey = (taskId: string) => `${DELIVERY_KEY_PREFIX}task:${taskId}`;
/**
 * A list per minute, not per hour: every send rewrites its list whole, and a webhook workflow that
 * texts once per execution would rewrite an hour's list thousands of times (about 2 ms a send at
 * 10,000 an hour, measured on the memory store, and growing with the list).
 */
const LIST_SPAN_MS = 60_000;
const listOf = (at: number) => Math.floor(at / LIST_SPAN_MS);
const listKey = (account: string, list: number) => `${DELIVERY_KEY_PREFIX}sent:${account}:${list}`;
/** A list lives as long as the records of its last minute. */
const listTtlMs = (list: number, keepMs: number, now: number) => (list + 1) * LIST_SPAN_MS + keepMs - now;
/** Lists pruned in one store update. */
const PRUNE_BATCH = 500;

/** A record another version wrote, or damaged, reads as absent: a report then simply has no reference. */
function readRecord(value: string | undefined, taskId: string): SendRecord | undefined {
	if (value === undefined) return undefined;
	try {
		const record = JSON.parse(value) as SendRecord;
		return typeof record === 'object' && record !== null && record.taskId === taskId && typeof record.keepUntil === 'number' ? record : undefined;
	} catch {
		return undefined;
	}
}

function readTaskIds(value: string | undefined): string[] {
	if (value === undefined) return [];
	try {
		const ids = JSON.parse(value) as unknown;
		return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
	} catch {
		return [];
	}
}

const writeRecord = (record: SendRecord, now: number): StoreWrite => ({
	key: taskKey(record.taskId),
	value: JSON.stringify(record),
	ttlMs: Math.max(1, record.keepUntil - now),
});

/**
 * Records sends of one credential (`account`, a hash without the appCode) in one update: each
 * task's record, and its ID in the list of the current minute. A report that reached a trigger
 * before its send was recorded stays marked.
 */
export async function recordSends(store: DurableStore, account: string, sends: readonly SendToRecord[], keepMs = KEEP_SENDS_MS): Promise<void> {
	if (sends.length === 0) return;
	// The list of the minute the store's clock says now; a send at the turn of the minute may land in the next one.
	const list = listOf(await store.now());
	const key = listKey(account, list);
	const taskIds = [...new Set(sends.map((send) => send.taskId))];
	await store.update([key, ...taskIds.map(taskKey)], ([listed, ...values], now) => {
		const keep = Math.max(keepMs, KEEP_SENDS_MS);
		const keepUntil = now + keep;
		const writes: StoreWrite[] = [{ key, value: JSON.stringify([...new Set([...readTaskIds(listed), ...taskIds])]), ttlMs: Math.max(1, listTtlMs(list, keep, now)) }];
		const byTask = new Map(sends.map((send) => [send.taskId, send]));
		taskIds.forEach((taskId, index) => {
			const before = readRecord(values[index], taskId);
			const send = byTask.get(taskId) as SendToRecord;
			// A re-run (Retry On Fail) records the same send again: its first time stays.
			writes.push(writeRecord({ ...before, ...send, sentAt: before?.sentAt ?? now, keepUntil: Math.max(before?.keepUntil ?? 0, keepUntil) }, now));
		});
		return { writes, result: undefined };
	});
}

/** What the store knows of each task, without marking anything (a trigger on its Test URL). */
export async function readSends(store: DurableStore, taskIds: readonly string[]): Promise<Map<string, SendRecord | undefined>> {
	const values = await store.read(taskIds.map(taskKey));
	return new Map(taskIds.map((taskId, index) => [taskId, readRecord(values[index], taskId)]));
}

export interface MarkedReport {
	/** The record as it was before this mark; undefined when the store did not know the task. */
	before: SendRecord | undefined;
	/** True when no one had marked this task's final status before. */
	first: boolean;
}

/**
 * Marks the final status of tasks as seen, in one update, and hands back what was known of each
 * send. A task the store does not know gets a record of its report only, so a send recorded later
 * is not listed as pending.
 */
export async function markReported(
	store: DurableStore,
	reports: ReadonlyArray<{ taskId: string; status: number }>,
	by: ReportedBy,
): Promise<Map<string, MarkedReport>> {
	const taskIds = [...new Set(reports.map((report) => report.taskId))];
	if (taskIds.length === 0) return new Map();
	const statusOf = new Map(reports.map((report) => [report.taskId, report.status]));
	return await store.update(taskIds.map(taskKey), (values, now) => {
		const writes: StoreWrite[] = [];
		const result = new Map<string, MarkedReport>();
		taskIds.forEach((taskId, index) => {
			const before = readRecord(values[index], taskId);
			const first = before?.reportedAt === undefined;
			result.set(taskId, { before, first });
			if (!first) return;
			const keepUntil = before?.keepUntil ?? now + KEEP_SENDS_MS;
			writes.push(writeRecord({ ...before, taskId, keepUntil, reportedAt: now, reportedBy: by, reportedStatus: statusOf.get(taskId) }, now));
		});
		return { writes, result };
	});
}

export interface PendingSends {
	/** Oldest first, at most `max`. */
	sends: SendRecord[];
	/** Pending sends left for a later run because of `max`. */
	more: number;
}

/**
 * The sends of one credential recorded between `since` and `until` (store clock) whose final
 * status no one has marked. Task IDs already marked, or expired, leave the minute lists as they
 * are read, so the lists shrink as reports arrive.
 */
export async function listPendingSends(store: DurableStore, account: string, since: number, until: number, max: number): Promise<PendingSends> {
	const lists: number[] = [];
	for (let list = listOf(since); list <= listOf(until); list++) lists.push(list);
	const values = await store.read(lists.map((list) => listKey(account, list)));
	const listed = lists.map((list, index) => ({ list, taskIds: readTaskIds(values[index]) })).filter(({ taskIds }) => taskIds.length > 0);
	const records = await readSends(store, [...new Set(listed.flatMap(({ taskIds }) => taskIds))]);

	const settled = new Set<string>();
	const pending: SendRecord[] = [];
	for (const [taskId, record] of records) {
		if (!record || record.reportedAt !== undefined) settled.add(taskId);
		else if (record.sentAt !== undefined && record.sentAt >= since && record.sentAt <= until) pending.push(record);
	}
	const toPrune = listed.filter(({ taskIds }) => taskIds.some((taskId) => settled.has(taskId))).map(({ list }) => list);
	for (let start = 0; start < toPrune.length; start += PRUNE_BATCH) {
		const batch = toPrune.slice(start, start + PRUNE_BATCH);
		const keys = batch.map((list) => listKey(account, list));
		// A settled task never becomes pending again, so dropping it from a list is safe whatever else changed meanwhile.
		await store.update(keys, (current, now) => ({
			writes: batch.map((list, index) => {
				const left = readTaskIds(current[index]).filter((taskId) => !settled.has(taskId));
				const ttlMs = listTtlMs(list, KEEP_SENDS_MS, now);
				return left.length > 0 && ttlMs > 0 ? { key: keys[index], value: JSON.stringify(left), ttlMs } : { key: keys[index], value: null };
			}),
			result: undefined,
		}));
	}
	pending.sort((a, b) => (a.sentAt ?? 0) - (b.sentAt ?? 0));
	return { sends: pending.slice(0, max), more: Math.max(0, pending.length - max) };
}

/** Delivered or failed: the statuses a delivery report carries, after which a task does not change. */
export function isFinalStatus(status: unknown): status is number {
	return status === SMS_TASK_STATUS.delivered || status === SMS_TASK_STATUS.failed;
}
