/**
 * The tests' (and benchmarks') one entry point to process-wide state: drop it as a restart of n8n
 * would, or read how much is kept. The nodes never import this file.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { accountNameOf, guardAccountOf } from './gateway/accountScope';
import { openGuardScope } from './store/guardScope';
import { SpendLedger, toYuan } from './money/ledger';
import { dropProcessState } from './state/processState';
import { openDurableStore } from './store/openStore';

export { executionMemoryStats } from './state/executionMemory';
export { openRedisCount } from './store/redis/connection';

/** Forgets every execution's memory, as a restart of n8n would (the durable stores keep theirs: forgetOpenStores). */
export function forgetAllExecutionMemory(): void {
	void dropProcessState('executionMemory');
}

/** Closes the durable stores' SQLite files and forgets every open store, as a restart would. */
export function forgetOpenStores(): void {
	void dropProcessState('openStores');
}

/** Forgets the send-record releases this process still owes a store (owedReleases.ts), as a restart would. */
export function forgetOwedReleases(): void {
	void dropProcessState('owedReleases');
}

/** Forgets every credential's limiter (its pauses and the rate it learned from 429s), as a restart would. */
export function forgetLimiters(): void {
	void dropProcessState('limiters');
}

/** Closes every Redis connection of this process. */
export function closeAllRedis(): void {
	void dropProcessState('redisConnections');
}

/** Drops pooled HTTP connections, so that changed proxy variables take effect. */
export async function resetConnectionPool(): Promise<void> {
	await dropProcessState('connectionPool');
}

/**
 * What the ledger (money/ledger.ts) counts for one execution, today and this month, in yuan, for the
 * account of `baseUrl` and `appCode`, in the store a node without a Redis in its credential opens.
 */
export async function ledgerSpentYuan(executionId: string, baseUrl: string, appCode: string, accountName = ''): Promise<{ execution: number; day: number; month: number }> {
	const ctx = { getNode: () => ({ credentials: {} }) } as unknown as IExecuteFunctions;
	const store = await openDurableStore(ctx);
	const guard = await openGuardScope(store, guardAccountOf({ baseUrl, appCode, accountName: accountNameOf(accountName) }), undefined);
	const ledger = new SpendLedger(guard, executionId, { capYuan: 0, dailyYuan: 0, monthlyYuan: 0 });
	const { spent } = await ledger.spent();
	return { execution: toYuan(spent.execution), day: toYuan(spent.day), month: toYuan(spent.month) };
}
