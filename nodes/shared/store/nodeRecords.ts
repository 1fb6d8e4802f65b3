import type { IExecuteFunctions } from 'n8n-workflow';

import { registerProcessState } from '../state/processState';
import { startSweep } from '../state/sweep';

/**
 * Values a node records across executions, in n8n's processed-data store (the one behind Remove
 * Duplicates' "seen in previous executions"): n8n's database, so it survives restarts and is
 * shared by queue-mode workers. The store keeps plain values (hashed) per node, without times, so
 * time windows are written into the values. It keeps one row per node that every call reads,
 * changes and writes back whole, with no lock: calls are serialised within this process, and
 * two processes at once can both see a value as new. Where n8n gives no such store (an n8n
 * without the helpers), the records live in this process's memory for a bounded time and
 * `acrossRestarts` is false.
 */
export interface NodeRecords {
	acrossRestarts: boolean;
	/** Records every value and says which of them were recorded before. */
	checkAndRecord(values: string[]): Promise<{ before: Set<string> }>;
	remove(values: string[]): Promise<void>;
}

/**
 * n8n's store keeps at most this many values per node, dropping the oldest. A send keeps about 14
 * (10 repeat buckets, the execution's marker, a minute, hour and day slot), so the node remembers
 * its last 20,000 or so sends; a node that sends more within a day should keep its records in Redis.
 */
export const MAX_RECORDS_PER_NODE = 300_000;

/**
 * The memory fallback keeps a value this long after it was last recorded: twice the longest window
 * the send records count in (a calendar day), so every count and the default repeat window hold.
 * It also keeps at most MAX_RECORDS_PER_NODE values per node, dropping the oldest, as n8n's store does.
 */
export const MEMORY_RECORD_LIFETIME_MS = 48 * 3_600_000;
const MEMORY_SWEEP_MS = 3_600_000;

/** Per node, each value and when it was last recorded, oldest first (a value recorded again moves last). */
const memoryRecords = new Map<string, Map<string, number>>();
let memorySweep: { stop(): void } | undefined;

registerProcessState('memoryRecords', forgetMemoryRecords);

/** Forgets the records kept in this process's memory, as a restart of n8n would. */
function forgetMemoryRecords(): void {
	memoryRecords.clear();
	memorySweep?.stop();
	memorySweep = undefined;
}

/** How many values the memory fallback holds over all nodes (read by tests through testing.ts). */
export function memoryRecordsHeld(): number {
	let held = 0;
	for (const records of memoryRecords.values()) held += records.size;
	return held;
}

/** Drops a node's values past their lifetime or beyond the bound, oldest first, and the node once it has none. */
function dropExpired(scope: string, records: Map<string, number>, now: number) {
	for (const [value, recordedAt] of records) {
		if (now - recordedAt < MEMORY_RECORD_LIFETIME_MS && records.size <= MAX_RECORDS_PER_NODE) break;
		records.delete(value);
	}
	if (records.size === 0) memoryRecords.delete(scope);
}

/** Nodes that are never run again lose their values too; the sweep stops once nothing is held. */
function sweepMemoryRecords() {
	const now = Date.now();
	for (const [scope, records] of memoryRecords) dropExpired(scope, records, now);
	if (memoryRecords.size === 0) forgetMemoryRecords();
}

function memoryNodeRecords(scope: string): NodeRecords {
	return {
		acrossRestarts: false,
		checkAndRecord: async (values) => {
			const now = Date.now();
			const known = memoryRecords.get(scope);
			if (known) dropExpired(scope, known, now);
			const records = memoryRecords.get(scope) ?? new Map<string, number>();
			memoryRecords.set(scope, records);
			memorySweep ??= startSweep(sweepMemoryRecords, MEMORY_SWEEP_MS);
			const before = new Set(values.filter((value) => records.has(value)));
			for (const value of values) {
				records.delete(value);
				records.set(value, now);
			}
			dropExpired(scope, records, now);
			return { before };
		},
		remove: async (values) => {
			const records = memoryRecords.get(scope);
			if (!records) return;
			for (const value of values) records.delete(value);
			if (records.size === 0) memoryRecords.delete(scope);
		},
	};
}

/** n8n's store reads a node's record, changes it and writes it back: one change at a time per node and process. */
const storeQueues = new Map<string, Promise<unknown>>();

function queued<T>(scope: string, work: () => Promise<T>): Promise<T> {
	const previous = storeQueues.get(scope) ?? Promise.resolve();
	const next = previous.then(work, work);
	const settled = next.catch(() => undefined);
	storeQueues.set(scope, settled);
	void settled.then(() => {
		if (storeQueues.get(scope) === settled) storeQueues.delete(scope);
	});
	return next;
}

/** Whose records these are: one node of one workflow (its id, or its name where n8n gives no id). */
export function recordsScope(ctx: IExecuteFunctions): string {
	return `${ctx.getWorkflow().id ?? ''}|${ctx.getNode().id ?? ctx.getNode().name}`;
}

export function nodeRecords(ctx: IExecuteFunctions): NodeRecords {
	const scope = recordsScope(ctx);
	const helpers = ctx.helpers as Partial<IExecuteFunctions['helpers']>;
	const options = { mode: 'entries' as const, maxEntries: MAX_RECORDS_PER_NODE };
	if (typeof helpers.checkProcessedAndRecord === 'function' && typeof helpers.removeProcessed === 'function') {
		const check = helpers.checkProcessedAndRecord.bind(helpers);
		const remove = helpers.removeProcessed.bind(helpers);
		return {
			acrossRestarts: true,
			checkAndRecord: (values) =>
				queued(scope, async () => {
					if (values.length === 0) return { before: new Set<string>() };
					const result = await check(values, 'node', options);
					return { before: new Set(result.processed.map(String)) };
				}),
			remove: (values) => queued(scope, async () => (values.length === 0 ? undefined : await remove(values, 'node', options))),
		};
	}
	return memoryNodeRecords(scope);
}
