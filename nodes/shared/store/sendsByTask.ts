import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';

import { SMS_TASK_STATUS } from '../gateway/catalog';
import type { DurableStore, StoreWrite } from './durableStore';
import { openDurableStore } from './openStore';
import { countDeliveries } from '../usage/deliveries';
import { entryOf, ownerOfReport, readTaskSends, writeTaskSends, type ReportedBy, type SendRecord, type SendToRecord, type TaskSends } from './taskSends';

export type { ReportedBy, SendRecord, SendToRecord } from './taskSends';

/** A send to record, with the number it texted: tagged on the task's write (StoreWrite.phone) so that erasing the number finds it, never kept in the value. */
export type SendToLog = SendToRecord & { phone?: string };

/**
 * Sends by task ID, in the durable store: what an SMS Trigger needs to tie a delivery report to its
 * send (the Reference, the send's workflow and execution), and what Check Pending Deliveries needs
 * to find the sends whose final report never arrived. Per task ID one value holding each account's
 * send (store/taskSends.ts: accounts may get the same task ID), and per account and minute an index
 * of the task IDs it sent in it (what Check Pending reads): a count of its parts, and parts of at
 * most PART_IDS task IDs each. The store hashes every key name.
 */

const HOUR_MS = 3_600_000;
/** Records are kept at least this long (or the repeat window, when longer). */
export const KEEP_SENDS_MS = 72 * HOUR_MS;
/** The longest reference kept: a record is read whole by every report, so it stays small. */
export const MAX_REFERENCE_CHARS = 1_000;

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
 * An index per minute, not per hour: a webhook workflow that texts once per execution sends
 * thousands of times an hour, and Check Pending reads a minute's index whole.
 */
const LIST_SPAN_MS = 60_000;
const listOf = (at: number) => Math.floor(at / LIST_SPAN_MS);
/**
 * Task IDs per part of a minute's index. A send rewrites only the minute's last part, so its cost
 * stays bounded however many sends the minute holds; one growing list per minute cost each save
 * the whole minute's IDs (20,000 sends in 40 executions of 500: 0.35 → 0.69 ms per send, and
 * 11–16 ms transactions, on the SQLite store).
 */
const PART_IDS = 200;
const partsKey = (account: string, list: number) => `${DELIVERY_KEY_PREFIX}parts:${account}:${list}`;
const partKey = (account: string, list: number, part: number) => `${DELIVERY_KEY_PREFIX}sent:${account}:${list}:${part}`;
/** An index lives as long as the records of its last minute. */
const listTtlMs = (list: number, keepMs: number, now: number) => (list + 1) * LIST_SPAN_MS + keepMs - now;
/** Parts pruned in one store update. */
const PRUNE_BATCH = 500;
/** Tries of one save whose guess of the minute's last part was wrong (another save started a part). */
const PART_TRIES = 20;

/**
 * The last part of each credential's current minute in each store, as this process last saw it:
 * only a guess (the update checks it against the count), so that a save names the right part in
 * one update.
 */
const lastPartSeen = new WeakMap<DurableStore, Map<string, { list: number; part: number }>>();
const MAX_ACCOUNTS_SEEN = 1_000;

function readPartCount(value: string | undefined): number {
	const count = Number(value);
	return Number.isSafeInteger(count) ? Math.max(0, count) : 0;
}

function readTaskIds(value: string | undefined): string[] {
	// Stryker disable next-line ConditionalExpression: JSON.parse(undefined) throws into the same catch
	if (value === undefined) return [];
	try {
		const ids = JSON.parse(value) as unknown;
		return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
	} catch {
		return [];
	}
}

/** Puts an account's record back where entryOf found it: its own entry, or the record from before entries. */
function withEntry(sends: TaskSends, account: string, record: SendRecord): TaskSends {
	if (sends.unowned !== undefined && entryOf(sends, account) === sends.unowned) return { ...sends, unowned: record };
	return { ...sends, accounts: { ...sends.accounts, [account]: record } };
}

/**
 * An account's record of a new send, from what the task's value held: its own entry (a re-run of
 * the same send keeps its first time), a report that arrived before any account recorded it (taken
 * over), or this same send recorded before entries were kept per account (moved into the entry).
 */
function recordedSend(sends: TaskSends, account: string, send: SendToRecord, now: number, keepUntil: number): TaskSends {
	const unowned = sends.unowned;
	const earlyReport = unowned?.sentAt === undefined ? unowned : undefined;
	// A report that came before its send names no execution.
	const sameSendBefore = unowned?.executionId === send.executionId && unowned.workflowId === send.workflowId ? unowned : undefined;
	const before = sends.accounts[account] ?? sameSendBefore;
	const taken = earlyReport ?? sameSendBefore;
	const record: SendRecord = { ...earlyReport, ...before, ...send, sentAt: before?.sentAt ?? now, keepUntil: Math.max(before?.keepUntil ?? 0, keepUntil) };
	return { taskId: sends.taskId, accounts: { ...sends.accounts, [account]: record }, ...(taken || !unowned ? {} : { unowned }) };
}

/**
 * Records sends of one credential (`account`, a hash without the appCode) in one update: each
 * task's record in the account's entry, and its ID in the last part of the current minute's index
 * (a new part when that one is full). A report that reached a trigger before its send was recorded
 * stays marked.
 */
export async function recordSends(store: DurableStore, account: string, sends: readonly SendToLog[], keepMs = KEEP_SENDS_MS): Promise<void> {
	if (sends.length === 0) return;
	// The minute the store's clock says now; a send at the turn of the minute may land in the next one.
	const list = listOf(await store.now());
	const taskIds = [...new Set(sends.map((send) => send.taskId))];
	const byTask = new Map(sends.map(({ phone, ...send }) => [send.taskId, { send, phone }]));
	let seenInStore = lastPartSeen.get(store);
	if (!seenInStore) lastPartSeen.set(store, (seenInStore = new Map()));
	const seen = seenInStore.get(account);
	let guess = seen?.list === list ? seen.part : 0;
	for (let attempt = 0; attempt < PART_TRIES; attempt++) {
		const expected = guess;
		const countKey = partsKey(account, list);
		const lastKey = partKey(account, list, expected);
		const nextKey = partKey(account, list, expected + 1);
		const saved = await store.update([countKey, lastKey, nextKey, ...taskIds.map(taskKey)], ([count, last, , ...values], now) => {
			const actual = Math.max(0, readPartCount(count) - 1);
			if (actual !== expected) return { writes: [], result: { written: false, part: actual } };
			const keep = Math.max(keepMs, KEEP_SENDS_MS);
			const ttlMs = Math.max(1, listTtlMs(list, keep, now));
			const listed = readTaskIds(last);
			const writes: StoreWrite[] = [];
			let written = expected;
			if (listed.length === 0 || listed.length + taskIds.length <= PART_IDS) writes.push({ key: lastKey, value: JSON.stringify([...new Set([...listed, ...taskIds])]), ttlMs });
			else {
				written = expected + 1;
				writes.push({ key: nextKey, value: JSON.stringify(taskIds), ttlMs });
			}
			// Written every time: a longer repeat window keeps the count as long as the part.
			writes.push({ key: countKey, value: String(written + 1), ttlMs });
			const keepUntil = now + keep;
			taskIds.forEach((taskId, index) => {
				const { send, phone } = byTask.get(taskId) as { send: SendToRecord; phone?: string };
				writes.push(writeTaskSends(taskKey(taskId), recordedSend(readTaskSends(values[index], taskId, now), account, send, now, keepUntil), now, phone));
			});
			return { writes, result: { written: true, part: written } };
		});
		if (seenInStore.size >= MAX_ACCOUNTS_SEEN && !seenInStore.has(account)) seenInStore.clear();
		seenInStore.set(account, { list, part: saved.part });
		if (saved.written) return;
		guess = saved.part;
	}
	throw new Error(`the delivery records' index of ${new Date(list * LIST_SPAN_MS).toISOString().slice(0, 16)} kept changing under this save; it was tried ${PART_TRIES} times`);
}

/**
 * What the store knows of each task, without marking anything: one account's send, or, without an
 * account (the SMS Trigger on its Test URL), the send of the one account that has the task (none
 * when several have).
 */
export async function readSends(store: DurableStore, taskIds: readonly string[], account?: string): Promise<Map<string, SendRecord | undefined>> {
	const [values, now] = await Promise.all([store.read(taskIds.map(taskKey)), store.now()]);
	return new Map(
		taskIds.map((taskId, index) => {
			const sends = readTaskSends(values[index], taskId, now);
			if (account !== undefined) return [taskId, entryOf(sends, account)];
			const owner = ownerOfReport(sends);
			// Stryker disable next-line ConditionalExpression,StringLiteral: an ambiguous owner holds no record either
			return [taskId, owner.kind === 'ambiguous' ? undefined : owner.record];
		}),
	);
}

export interface MarkedReport {
	/** The record as it was before this mark; undefined when the store did not know the task. */
	before: SendRecord | undefined;
	/** True when no one had marked this task's final status before. */
	first: boolean;
	/** Several accounts sent this task ID and the report named none: nothing was marked or looked up. */
	ambiguous?: boolean;
}

type ReportMark = Pick<SendRecord, 'reportedAt' | 'reportedBy' | 'reportedStatus'>;
type MarkedSends = { sends?: TaskSends; marked: MarkedReport };

/** The record of a final status seen, on what was known of the send. */
const reportRecord = (sends: TaskSends, before: SendRecord | undefined, mark: ReportMark, now: number): SendRecord => ({ ...before, taskId: sends.taskId, keepUntil: before?.keepUntil ?? now + KEEP_SENDS_MS, ...mark });

/** One task's value after an account's node (Send and Check, Check Pending) saw its final status, with what was known before. */
function markedByAccount(sends: TaskSends, account: string, mark: ReportMark, now: number): MarkedSends {
	const before = entryOf(sends, account);
	if (before?.reportedAt !== undefined) return { marked: { before, first: false } };
	return { sends: withEntry(sends, account, reportRecord(sends, before, mark, now)), marked: { before, first: true } };
}

/** One task's value after the SMS Trigger, which knows only the task ID, saw its final status. */
function markedByTask(sends: TaskSends, mark: ReportMark, now: number): MarkedSends {
	const owner = ownerOfReport(sends);
	if (owner.kind === 'ambiguous') return { marked: { before: undefined, first: false, ambiguous: true } };
	const before = owner.record;
	if (before?.reportedAt !== undefined) return { marked: { before, first: false } };
	const record = reportRecord(sends, before, mark, now);
	if (owner.kind === 'account') return { sends: withEntry(sends, owner.account, record), marked: { before, first: true } };
	// The send of a time before entries, or no send yet: the next account to record the task takes the mark over.
	return { sends: { ...sends, unowned: record }, marked: { before, first: true } };
}

/**
 * Marks the final status of tasks as seen, in one update, and hands back what was known of each
 * send. `account` is the credential's account (Send and Check, Check Pending); the SMS Trigger has
 * none and marks the send of the one account that has the task (nothing when several have). A task
 * the store does not know gets a record of its report only, so a send recorded later is not listed
 * as pending.
 */
export async function markReported(
	store: DurableStore,
	reports: ReadonlyArray<{ taskId: string; status: number }>,
	by: ReportedBy,
	account?: string,
): Promise<Map<string, MarkedReport>> {
	const taskIds = [...new Set(reports.map((report) => report.taskId))];
	if (taskIds.length === 0) return new Map();
	const statusOf = new Map(reports.map((report) => [report.taskId, report.status]));
	const marked = await store.update(taskIds.map(taskKey), (values, now) => {
		const writes: StoreWrite[] = [];
		const result = new Map<string, MarkedReport>();
		taskIds.forEach((taskId, index) => {
			const mark = { reportedAt: now, reportedBy: by, reportedStatus: statusOf.get(taskId) };
			const stored = readTaskSends(values[index], taskId, now);
			const { sends, marked } = account === undefined ? markedByTask(stored, mark, now) : markedByAccount(stored, account, mark, now);
			result.set(taskId, marked);
			if (sends) writes.push(writeTaskSends(taskKey(taskId), sends, now));
		});
		return { writes, result };
	});
	await countDeliveries(store, marked, statusOf);
	return marked;
}

/**
 * Check Pending Deliveries asked about these sends and they are still pending: each moves to the
 * back of the account's queue, so the next run asks about the others first.
 */
export async function markChecked(store: DurableStore, account: string, taskIds: readonly string[]): Promise<void> {
	const unique = [...new Set(taskIds)];
	if (unique.length === 0) return;
	await store.update(unique.map(taskKey), (values, now) => ({
		writes: unique.flatMap((taskId, index) => {
			const sends = readTaskSends(values[index], taskId, now);
			const record = entryOf(sends, account);
			if (!record || record.reportedAt !== undefined) return [];
			return [writeTaskSends(taskKey(taskId), withEntry(sends, account, { ...record, checkedAt: now }), now)];
		}),
		result: undefined,
	}));
}

export interface PendingSends {
	/** At most `max`, the least recently asked about first (see markChecked). */
	sends: SendRecord[];
	/** Pending sends left for a later run because of `max`. */
	more: number;
}

/**
 * The sends of one credential recorded between `since` and `until` (store clock) whose final
 * status no one has marked. Task IDs already marked, or expired, leave the index's parts as they
 * are read, so the parts shrink as reports arrive.
 */
export async function listPendingSends(store: DurableStore, account: string, since: number, until: number, max: number): Promise<PendingSends> {
	// Stryker disable next-line ArrayDeclaration: a list named by text has no parts in the store
	const lists: number[] = [];
	for (let list = listOf(since); list <= listOf(until); list++) lists.push(list);
	const counts = await store.read(lists.map((list) => partsKey(account, list)));
	const parts = lists.flatMap((list, index) => Array.from({ length: readPartCount(counts[index]) }, (_, part) => ({ list, key: partKey(account, list, part) })));
	const values = await store.read(parts.map(({ key }) => key));
	const listed = parts.map((part, index) => ({ ...part, taskIds: readTaskIds(values[index]) }));
	const records = await readSends(store, [...new Set(listed.flatMap(({ taskIds }) => taskIds))], account);

	const settled = new Set<string>();
	const pending: SendRecord[] = [];
	for (const [taskId, record] of records) {
		if (!record || record.reportedAt !== undefined) settled.add(taskId);
		else if (record.sentAt !== undefined && record.sentAt >= since && record.sentAt <= until) pending.push(record);
	}
	const toPrune = listed.filter(({ taskIds }) => taskIds.some((taskId) => settled.has(taskId)));
	for (let start = 0; start < toPrune.length; start += PRUNE_BATCH) {
		const batch = toPrune.slice(start, start + PRUNE_BATCH);
		const keys = batch.map(({ key }) => key);
		// A settled task never becomes pending again, so dropping it from a part is safe whatever else changed meanwhile.
		await store.update(keys, (current, now) => ({
			writes: batch.map(({ key, list }, index) => {
				const left = readTaskIds(current[index]).filter((taskId) => !settled.has(taskId));
				const ttlMs = listTtlMs(list, KEEP_SENDS_MS, now);
				return left.length > 0 && ttlMs > 0 ? { key, value: JSON.stringify(left), ttlMs } : { key, value: null };
			}),
			result: undefined,
		}));
	}
	// A queue: first the sends asked about least recently (a send never asked about counts from when it was sent), so
	// messages still sending at the front cannot keep the ones behind them from being asked about.
	const turn = (record: SendRecord) => record.checkedAt ?? record.sentAt ?? 0;
	pending.sort((a, b) => turn(a) - turn(b) || (a.sentAt ?? 0) - (b.sentAt ?? 0));
	return { sends: pending.slice(0, max), more: Math.max(0, pending.length - max) };
}

/** Delivered or failed: the statuses a delivery report carries, after which a task does not change. */
export function isFinalStatus(status: unknown): status is number {
	return status === SMS_TASK_STATUS.delivered || status === SMS_TASK_STATUS.failed;
}
