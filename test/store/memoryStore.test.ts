/** The memory store (nodes/shared/store/memoryStore.ts) keeps the same contract as Redis and SQLite. */
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { storeContract } from './contract';

describe('memory store: the contract', () => {
	// One process's memory: every handle in it is the same store.
	const store = new MemoryStore();
	storeContract({ store: () => store, other: () => store });
});
