/**
 * The tests' (and benchmarks') one entry point to process-wide state: drop it as a restart of n8n
 * would, or read how much is kept. The nodes never import this file.
 */
import { dropProcessState } from './state/processState';

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
