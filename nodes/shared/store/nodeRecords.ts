import type { IExecuteFunctions } from 'n8n-workflow';

import { registerProcessState } from '../state/processState';

/**
 * Values a node records across executions, in n8n's processed-data store (the one behind Remove
 * Duplicates' "seen in previous executions"): n8n's database, so it survives restarts and is
 * shared by queue-mode workers. The store keeps plain values (hashed) per node, without times, so
 * time windows are written into the values. It keeps one row per node that every call reads,
 * changes and writes back whole, with no lock: calls are serialised within this process, and
 * two processes at once can both see a value as new. Where n8n gives no such store (an n8n
 * without the helpers), the records live in this process's memory and `acrossRestarts` is false.
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

const memoryRecords = new Map<string, Set<string>>();

registerProcessState('memoryRecords', () => memoryRecords.clear());

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
	return {
		acrossRestarts: false,
		checkAndRecord: async (values) => {
			let records = memoryRecords.get(scope);
			if (!records) memoryRecords.set(scope, (records = new Set()));
			const before = new Set(values.filter((value) => records.has(value)));
			for (const value of values) records.add(value);
			return { before };
		},
		remove: async (values) => {
			for (const value of values) memoryRecords.get(scope)?.delete(value);
		},
	};
}
