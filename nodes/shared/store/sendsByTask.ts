import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';

import { SMS_TASK_STATUS } from '../gateway/catalog';
import type { DurableStore, StoreWrite } from './durableStore';
import { openDurableStore } from './openStore';

/**
 * Sends by task ID, in the durable store: what an SMS Trigger needs to tie a delivery report to its
 * send (the Reference, the send's workflow and execution), and what Check Pending Deliveries needs
 * to find the sends whose final report never arrived. Per send one record under its task ID, and
 * per credential and hour one list of the task IDs sent in it (the index Check Pending reads).
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
	const node = ctx.getNode();
	if (!node.credentials) return await openDurableStore(ctx);
	const withoutCredential = Object.create(ctx, { getNode: { value: () => ({ ...node, credentials: undefined }) } }) as typeof ctx;
	return await openDurableStore(withoutCredential);
}

const taskKey = (taskId: string) => `delivery:task:${taskId}`;
const hourOf = (at: number) => Math.floor(at / HOUR_MS);
const hourKey = (account: string, hour: number) => `delivery:sent:${account}:${hour}`;

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
 * task's record, and its ID in the list of the current hour. A report that reached a trigger
 * before its send was recorded stays marked.
 */
export async function recordSends(store: DurableStore, account: string, sends: readonly SendToRecord[], keepMs = KEEP_SENDS_MS): Promise<void> {
	if (sends.length === 0) return;
	// The list of the hour the store's clock says now; a send at the turn of the hour may land in the next one.
	const listKey = hourKey(account, hourOf(await store.now()));
	const taskIds = [...new Set(sends.map((send) => send.taskId))];
	await store.update([listKey, ...taskIds.map(taskKey)], ([list, ...values], now) => {
		const keepUntil = now + Math.max(keepMs, KEEP_SENDS_MS);
		const listed = readTaskIds(list);
		const writes: StoreWrite[] = [{ key: listKey, value: JSON.stringify([...new Set([...listed, ...taskIds])]), ttlMs: keepUntil - now + HOUR_MS }];
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
 * status no one has marked. Task IDs already marked, or expired, leave the hourly lists as they
 * are read, so the lists shrink as reports arrive.
 */
export async function listPendingSends(store: DurableStore, account: string, since: number, until: number, max: number): Promise<PendingSends> {
	const hours: number[] = [];
	for (let hour = hourOf(since); hour <= hourOf(until); hour++) hours.push(hour);
	const lists = await store.read(hours.map((hour) => hourKey(account, hour)));
	const listed = hours.map((hour, index) => ({ hour, taskIds: readTaskIds(lists[index]) }));
	const records = await readSends(store, [...new Set(listed.flatMap((list) => list.taskIds))]);

	const settled = new Set<string>();
	const pending: SendRecord[] = [];
	for (const [taskId, record] of records) {
		if (!record || record.reportedAt !== undefined) settled.add(taskId);
		else if (record.sentAt !== undefined && record.sentAt >= since && record.sentAt <= until) pending.push(record);
	}
	for (const { hour, taskIds } of listed) {
		if (!taskIds.some((taskId) => settled.has(taskId))) continue;
		const key = hourKey(account, hour);
		// A settled task never becomes pending again, so dropping it from the list is safe whatever else changed meanwhile.
		await store.update([key], ([value], now) => {
			const left = readTaskIds(value).filter((taskId) => !settled.has(taskId));
			const ttlMs = (hour + 1) * HOUR_MS + KEEP_SENDS_MS + HOUR_MS - now;
			return { writes: [{ key, value: left.length > 0 && ttlMs > 0 ? JSON.stringify(left) : null, ...(ttlMs > 0 ? { ttlMs } : {}) }], result: undefined };
		});
	}
	pending.sort((a, b) => (a.sentAt ?? 0) - (b.sentAt ?? 0));
	return { sends: pending.slice(0, max), more: Math.max(0, pending.length - max) };
}

/** Delivered or failed: the statuses a delivery report carries, after which a task does not change. */
export function isFinalStatus(status: unknown): status is number {
	return status === SMS_TASK_STATUS.delivered || status === SMS_TASK_STATUS.failed;
}
