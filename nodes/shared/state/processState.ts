/**
 * State that lives as long as the n8n process: execution memories, Redis connections, open durable
 * stores, the HTTP pool, the credentials' limiters. Each module that keeps some registers here how to drop it,
 * as a restart would. Only nodes/shared/testing.ts (the tests' entry point, never imported by the
 * nodes) drops it; a module that was never loaded has nothing to drop.
 */
export type ProcessState = 'executionMemory' | 'redisConnections' | 'openStores' | 'connectionPool' | 'limiters' | 'owedReleases';

type Drop = () => void | Promise<void>;

const drops = new Map<ProcessState, Drop>();

export function registerProcessState(state: ProcessState, drop: Drop): void {
	drops.set(state, drop);
}

export function dropProcessState(state: ProcessState): void | Promise<void> {
	return drops.get(state)?.();
}
