import './n8nEnv';

import { DataDeduplicationService } from 'n8n-core';
import type { DeduplicationItemTypes, ICheckProcessedContextData, ICheckProcessedOptions, IDataDeduplicator } from 'n8n-workflow';

/**
 * n8n's processed-data store, in memory: what n8n keeps in its database table. It reads a node's
 * record, changes it and writes it back like n8n does, and outlives executions until reset.
 */
class MemoryDeduplicator implements IDataDeduplicator {
	readonly records = new Map<string, DeduplicationItemTypes[]>();
	calls = 0;

	private key(scope: string, context: ICheckProcessedContextData) {
		return `${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
	}

	async checkProcessedAndRecord(items: DeduplicationItemTypes[], scope: 'node' | 'workflow', context: ICheckProcessedContextData, options: ICheckProcessedOptions) {
		this.calls++;
		const stored = [...(this.records.get(this.key(scope, context)) ?? [])];
		const known = new Set(stored.map(String));
		const result = { new: [] as DeduplicationItemTypes[], processed: [] as DeduplicationItemTypes[] };
		for (const item of items) {
			if (known.has(String(item))) {
				result.processed.push(item);
			} else {
				result.new.push(item);
				stored.push(item);
			}
		}
		if (options.maxEntries) stored.splice(0, Math.max(0, stored.length - options.maxEntries));
		this.records.set(this.key(scope, context), stored);
		return result;
	}

	async removeProcessed(items: DeduplicationItemTypes[], scope: 'node' | 'workflow', context: ICheckProcessedContextData) {
		this.calls++;
		const drop = new Set(items.map(String));
		const stored = this.records.get(this.key(scope, context)) ?? [];
		this.records.set(this.key(scope, context), stored.filter((item) => !drop.has(String(item))));
	}

	async clearAllProcessedItems(scope: 'node' | 'workflow', context: ICheckProcessedContextData) {
		this.records.delete(this.key(scope, context));
	}

	async getProcessedDataCount(scope: 'node' | 'workflow', context: ICheckProcessedContextData) {
		return this.records.get(this.key(scope, context))?.length ?? 0;
	}
}

/** The store behind the nodes' processed-data helpers; persists across runWorkflow calls of one test. */
export const processedData = new MemoryDeduplicator();
void DataDeduplicationService.init(processedData);
// Each test starts with an empty store, as a fresh n8n database would (test/harness/freshStore.ts
// does the same for the durable store).
if (typeof beforeEach === 'function')
	beforeEach(() => {
		processedData.records.clear();
	});

