import type { StoreWrite } from './durableStore';

/**
 * The stored value of one task ID (store/sendsByTask.ts): the sends of every account that got that
 * ID, one entry per account. The gateway's task IDs are its own: two accounts, or two gateways, may
 * get the same one, and each account's Reference and report mark stay in its own entry. The key is
 * the task ID alone because a delivery report carries nothing else (docs/gateway-api.md, Callbacks):
 * the SMS Trigger has no credential, and it finds the account as the only one that sent the task.
 */

/** Who first saw a task's final status: an SMS Trigger, Send and Check Delivery, or Check Pending Deliveries. */
export type ReportedBy = 'trigger' | 'sendAndCheck' | 'checkPending';

export interface SendToRecord {
	taskId: string;
	/** The send's Reference option, or null when it had none. */
	reference: string | null;
	workflowId: string;
	executionId: string;
	/** The account scope (gateway/accountScope.ts) the send's usage is counted under: its delivery report counts there too (usage/deliveries.ts). */
	scope?: string;
}

export interface SendRecord extends Partial<SendToRecord> {
	taskId: string;
	/** Store clock, ms since the epoch. Absent on a report that arrived before its send was recorded. */
	sentAt?: number;
	keepUntil: number;
	reportedAt?: number;
	reportedBy?: ReportedBy;
	reportedStatus?: number;
	/** When Check Pending Deliveries last asked about it (store clock): it asks the least recently asked first. */
	checkedAt?: number;
}

export interface TaskSends {
	taskId: string;
	/** By account key (a hash of the credential's base URL and appCode, never the appCode). */
	accounts: Record<string, SendRecord>;
	/**
	 * A record whose account is not known: one written before records were kept per account (it has
	 * `sentAt`, and lives out its 72 hours), or a report that reached the trigger before any account
	 * recorded the send (no `sentAt`; the next account to record the task takes it over).
	 */
	unowned?: SendRecord;
}

function readEntry(value: unknown, taskId: string, now: number): SendRecord | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const record = value as SendRecord;
	return record.taskId === taskId && typeof record.keepUntil === 'number' && record.keepUntil > now ? record : undefined;
}

/** The task's sends as stored; a value another version wrote, or damaged, reads as empty. Expired entries are left out. */
export function readTaskSends(value: string | undefined, taskId: string, now: number): TaskSends {
	const empty: TaskSends = { taskId, accounts: {} };
	if (value === undefined) return empty;
	let parsed: unknown;
	try {
		parsed = JSON.parse(value);
	} catch {
		return empty;
	}
	if (typeof parsed !== 'object' || parsed === null) return empty;
	const stored = parsed as Partial<TaskSends>;
	// The shape before records were kept per account: one record, its account unknown.
	if (typeof stored.accounts !== 'object' || stored.accounts === null) return { ...empty, unowned: readEntry(parsed, taskId, now) };
	const accounts: Record<string, SendRecord> = {};
	for (const [account, entry] of Object.entries(stored.accounts)) {
		const record = readEntry(entry, taskId, now);
		if (record) accounts[account] = record;
	}
	return { taskId, accounts, unowned: readEntry(stored.unowned, taskId, now) };
}

/**
 * The write that stores `sends` (deleted when nothing is left), kept as long as its longest-lived
 * entry; `phone`, the number texted, goes with the write (StoreWrite.phone), never into the value.
 */
export function writeTaskSends(key: string, sends: TaskSends, now: number, phone?: string): StoreWrite {
	const entries = [...Object.values(sends.accounts), ...(sends.unowned ? [sends.unowned] : [])];
	if (entries.length === 0) return { key, value: null };
	const keepUntil = Math.max(...entries.map((entry) => entry.keepUntil));
	const value: TaskSends = { taskId: sends.taskId, accounts: sends.accounts, ...(sends.unowned ? { unowned: sends.unowned } : {}) };
	const write: StoreWrite = { key, value: JSON.stringify(value), ttlMs: Math.max(1, keepUntil - now) };
	return phone === undefined ? write : { ...write, phone };
}

/** An unowned record of a send made before records were kept per account. */
const isEarlierSend = (record: SendRecord | undefined): record is SendRecord => record?.sentAt !== undefined;

/**
 * One account's record of the task: its own entry, else a record from before entries were kept per
 * account (the account's own index listed the task, so it is the account's send).
 */
export function entryOf(sends: TaskSends, account: string): SendRecord | undefined {
	return sends.accounts[account] ?? (isEarlierSend(sends.unowned) ? sends.unowned : undefined);
}

/** Where a report without an account (the SMS Trigger's) belongs. */
export type ReportOwner =
	| { kind: 'account'; account: string; record: SendRecord }
	| { kind: 'earlier'; record: SendRecord }
	| { kind: 'none'; record?: SendRecord }
	| { kind: 'ambiguous' };

/**
 * The send a report belongs to when only its task ID is known: the one account that sent it. When
 * several did, nobody's record is used, so one account's reference never lands on another's report.
 */
export function ownerOfReport(sends: TaskSends): ReportOwner {
	const owners = Object.entries(sends.accounts).filter(([, record]) => record.sentAt !== undefined);
	const earlier = isEarlierSend(sends.unowned) ? 1 : 0;
	if (owners.length + earlier > 1) return { kind: 'ambiguous' };
	if (owners.length === 1) return { kind: 'account', account: owners[0][0], record: owners[0][1] };
	if (earlier) return { kind: 'earlier', record: sends.unowned as SendRecord };
	// Only marks without a send: an account's (Send and Check saw the status first) or the trigger's own.
	const marks = Object.values(sends.accounts);
	return { kind: 'none', record: marks.length === 1 ? marks[0] : sends.unowned };
}
