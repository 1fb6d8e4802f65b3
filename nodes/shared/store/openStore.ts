import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';

import type { DurableStore } from './durableStore';
import { MemoryStore } from './memoryStore';

let processMemory: MemoryStore | undefined;

/**
 * The durable store for this node's credential. Order: the credential's Redis, n8n's queue Redis
 * in queue mode, an SQLite file in n8n's user folder, this process's memory.
 * (Redis and SQLite arrive with the store work; until then every caller gets process memory.)
 */
export async function openDurableStore(ctx: IExecuteFunctions | IWebhookFunctions): Promise<DurableStore> {
	void ctx;
	processMemory ??= new MemoryStore();
	return processMemory;
}

/** Forgets what the process's memory store holds, as a restart of n8n would (tests: a fresh store per test). */
export function forgetProcessMemoryStore(): void {
	processMemory?.clear();
}
