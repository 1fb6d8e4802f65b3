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

describe('memory store: what it holds about a number', () => {
	const write = (store: MemoryStore, key: string, value: string, phone?: string) =>
		store.update([key], () => ({ writes: [{ key, value, ...(phone === undefined ? {} : { phone }) }], result: undefined }));

	it("erases every entry written about a number, keeps a rewrite's number when the rewrite names none, and follows a rewrite to another number", async () => {
		const store = new MemoryStore();
		await write(store, 'record', 'r', '13800138000');
		await write(store, 'count', 'c', '13800138000');
		await write(store, 'other', 'o', '13900139000');
		await write(store, 'unnamed', 'u');
		// A delivery report's mark knows no number: the entry stays the first number's.
		await write(store, 'record', 'r2');
		// Moved to another number: no longer the first's.
		await write(store, 'count', 'c2', '13900139000');
		expect(await store.erasePhone('13700137000')).toBe(0);
		expect(await store.erasePhone('13800138000')).toBe(1);
		expect(await store.read(['record', 'count', 'other', 'unnamed'])).toEqual([undefined, 'c2', 'o', 'u']);
		expect(await store.erasePhone('13900139000')).toBe(2);
		expect(await store.read(['count', 'other', 'unnamed'])).toEqual([undefined, undefined, 'u']);
		expect(store.size).toBe(1);
	});

	it('reads an entry up to its expiry, and not at it', async () => {
		let now = Date.UTC(2026, 0, 5);
		const store = new MemoryStore(() => now);
		await store.update(['a'], () => ({ writes: [{ key: 'a', value: '1', ttlMs: 1_000 }], result: undefined }));
		now += 999;
		expect(await store.read(['a'])).toEqual(['1']);
		now += 1;
		expect(await store.read(['a'])).toEqual([undefined]);
		expect(store.size).toBe(0);
	});

	it('holds keys under their stored names and numbers as tags: a dump shows neither key nor number', async () => {
		const store = new MemoryStore();
		await write(store, 'send|13800138000', 'value', '13800138000');
		const dump = store.dump();
		expect(dump).toContain('value');
		expect(dump).toContain('phoneTag');
		expect(dump).not.toContain('13800138000');
		expect(dump).not.toContain('send|');
	});

	it('stops its sweep once nothing is held, and starts it again with the next entry', async () => {
		jest.useFakeTimers({ now: Date.UTC(2026, 0, 5) });
		try {
			const store = new MemoryStore(() => Date.now());
			// An update that leaves nothing held starts no sweep.
			await store.update(['a'], () => ({ writes: [], result: undefined }));
			expect(jest.getTimerCount()).toBe(0);
			// Expiring exactly at the first tick: dropped by it.
			await store.update(['a'], () => ({ writes: [{ key: 'a', value: '1', ttlMs: 60_000 }], result: undefined }));
			expect(jest.getTimerCount()).toBe(1);
			jest.advanceTimersByTime(60_000);
			expect(store.size).toBe(0);
			expect(jest.getTimerCount()).toBe(0);
			await store.update(['b'], () => ({ writes: [{ key: 'b', value: '2', ttlMs: 30_000 }], result: undefined }));
			expect(jest.getTimerCount()).toBe(1);
			jest.advanceTimersByTime(60_000);
			expect(store.size).toBe(0);
		} finally {
			jest.useRealTimers();
		}
	});
});
