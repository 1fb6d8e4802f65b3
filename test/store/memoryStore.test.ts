/** The memory store (nodes/shared/store/memoryStore.ts) keeps the same contract as Redis and SQLite. */
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { storeContract } from './contract';

describe('memory store: the contract', () => {
	// One process's memory: every handle in it is the same store.
	const store = new MemoryStore();
	storeContract({ store: () => store, other: () => store });
});

describe('memory store: bounded in time', () => {
	afterEach(() => jest.useRealTimers());

	it('an entry nobody reads again is dropped once its lifetime has passed; one without a lifetime stays', async () => {
		jest.useFakeTimers();
		let now = Date.UTC(2026, 0, 5);
		const store = new MemoryStore(() => now);
		await store.update(['short', 'kept'], () => ({
			writes: [
				{ key: 'short', value: 'a', ttlMs: 60_000 },
				{ key: 'kept', value: 'b' },
			],
			result: undefined,
		}));
		expect(store.size).toBe(2);
		now += 2 * 60_000;
		jest.advanceTimersByTime(2 * 60_000);
		expect(store.size).toBe(1);
		expect(await store.read(['kept'])).toEqual(['b']);
	});

	it('the sweep goes on after its first tick: an entry that outlives the first minute is dropped at the second', async () => {
		jest.useFakeTimers({ now: Date.UTC(2026, 0, 5) });
		const store = new MemoryStore(() => Date.now());
		await store.update(['ninety seconds', 'kept'], () => ({
			writes: [
				{ key: 'ninety seconds', value: 'a', ttlMs: 90_000 },
				{ key: 'kept', value: 'b' },
			],
			result: undefined,
		}));
		jest.advanceTimersByTime(60_000);
		expect(store.size).toBe(2);
		jest.advanceTimersByTime(60_000);
		expect(store.size).toBe(1);
	});
});
