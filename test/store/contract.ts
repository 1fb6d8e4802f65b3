/**
 * The promises every durable store keeps (nodes/shared/store/durableStore.ts), run against each
 * implementation by its own test file: values and deletes, expiry, the store's clock, decide's
 * errors, writes outside the keys read, and atomicity under two updaters on separate connections.
 */
import { StoreUnavailable, type DurableStore } from '../../nodes/shared/store/durableStore';

export interface StoreUnderTest {
	/** A store on shared data. */
	store: () => DurableStore;
	/** Another handle to the same data: its own connection (Redis) or file handle (SQLite). */
	other: () => DurableStore;
}

let keyCounter = 0;
/** Keys no other test uses. */
export function freshKey(name: string): string {
	keyCounter++;
	return `contract:${process.pid}:${keyCounter}:${name}`;
}

/** Waits until `check` holds, on the store's state (bounded, so a broken store fails the test). */
export async function until(check: () => Promise<boolean>, what: string, limitMs = 10_000): Promise<void> {
	const started = Date.now();
	while (!(await check())) {
		if (Date.now() - started > limitMs) throw new Error(`still not true after ${limitMs} ms: ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

/** One increment of a counter, returning the value it wrote. */
export function increment(store: DurableStore, key: string): Promise<number> {
	return store.update([key], (values) => {
		const next = Number(values[0] ?? '0') + 1;
		return { writes: [{ key, value: String(next), ttlMs: 600_000 }], result: next };
	});
}

/** The contract; `setup` gives the stores once they are open (in beforeAll). */
export function storeContract(setup: StoreUnderTest): void {
	it('reads absent keys as undefined, then what an update wrote, and a null write deletes', async () => {
		const store = setup.store();
		const [a, b] = [freshKey('a'), freshKey('b')];
		expect(await store.read([a, b])).toEqual([undefined, undefined]);
		const result = await store.update([a, b], (values) => ({
			writes: [
				{ key: a, value: 'first ✓ "quoted" \n' },
				{ key: b, value: '', ttlMs: 60_000 },
			],
			result: values,
		}));
		expect(result).toEqual([undefined, undefined]);
		expect(await store.read([b, a, b])).toEqual(['', 'first ✓ "quoted" \n', '']);
		expect(await setup.other().read([a])).toEqual(['first ✓ "quoted" \n']);
		await store.update([a], () => ({ writes: [{ key: a, value: null }], result: undefined }));
		expect(await store.read([a, b])).toEqual([undefined, '']);
		expect(await store.read([])).toEqual([]);
	});

	it("hands decide the store's clock, which now() also reads", async () => {
		const store = setup.store();
		const before = await store.now();
		const seen = await store.update([freshKey('clock')], (_values, now) => ({ writes: [], result: now }));
		const after = await store.now();
		expect(Number.isSafeInteger(before)).toBe(true);
		expect(seen).toBeGreaterThanOrEqual(before);
		expect(after).toBeGreaterThanOrEqual(seen);
		// The same clock as this host's, within a minute (Redis runs on this host in the tests).
		expect(Math.abs(before - Date.now())).toBeLessThan(60_000);
	});

	it('forgets a value once its ttl has passed, and keeps one without a ttl or with a long one', async () => {
		const store = setup.store();
		const [short, long, forever] = [freshKey('short'), freshKey('long'), freshKey('forever')];
		await store.update([short, long, forever], () => ({
			writes: [
				{ key: short, value: 's', ttlMs: 1 },
				{ key: long, value: 'l', ttlMs: 3_600_000 },
				{ key: forever, value: 'f' },
			],
			result: undefined,
		}));
		await until(async () => (await store.read([short]))[0] === undefined, 'the 1 ms value to expire');
		expect(await store.read([short, long, forever])).toEqual([undefined, 'l', 'f']);
		// An update sees the expired key as absent too.
		expect(await store.update([short], (values) => ({ writes: [], result: values[0] }))).toBeUndefined();
	});

	it("passes decide's own error on unchanged and writes nothing", async () => {
		const store = setup.store();
		const key = freshKey('decide-throws');
		const mine = new Error('decided against it');
		await expect(
			store.update([key], () => {
				throw mine;
			}),
		).rejects.toBe(mine);
		expect(await store.read([key])).toEqual([undefined]);
	});

	it('refuses a write to a key the update did not read, writing none of it', async () => {
		const store = setup.store();
		const [read, notRead] = [freshKey('read'), freshKey('not-read')];
		const attempt = store.update([read], () => ({ writes: [{ key: read, value: 'x' }, { key: notRead, value: 'y' }], result: undefined }));
		await expect(attempt).rejects.toThrow(/did not read/);
		await expect(attempt).rejects.not.toBeInstanceOf(StoreUnavailable);
		expect(await store.read([read, notRead])).toEqual([undefined, undefined]);
	});

	it('refuses a negative ttl', async () => {
		const store = setup.store();
		const key = freshKey('negative');
		await expect(store.update([key], () => ({ writes: [{ key, value: 'x', ttlMs: -5 }], result: undefined }))).rejects.toThrow(/ttlMs/);
		expect(await store.read([key])).toEqual([undefined]);
	});

	it('loses no increment when two connections update one counter at once', async () => {
		const [first, second] = [setup.store(), setup.other()];
		const key = freshKey('counter');
		const each = 60;
		const results = await Promise.all([
			...Array.from({ length: each }, () => increment(first, key)),
			...Array.from({ length: each }, () => increment(second, key)),
		]);
		expect(await first.read([key])).toEqual([String(2 * each)]);
		// Every update saw a different value: no two decided on the same state.
		expect(new Set(results).size).toBe(2 * each);
	});

	it('moves a value between two keys all-or-nothing under concurrent moves', async () => {
		const [first, second] = [setup.store(), setup.other()];
		const [left, right] = [freshKey('left'), freshKey('right')];
		await first.update([left, right], () => ({ writes: [{ key: left, value: '100' }, { key: right, value: '0' }], result: undefined }));
		const move = (store: DurableStore, from: string, to: string) =>
			store.update([from, to], (values) => ({
				writes: [
					{ key: from, value: String(Number(values[0]) - 1) },
					{ key: to, value: String(Number(values[1]) + 1) },
				],
				result: undefined,
			}));
		await Promise.all(Array.from({ length: 40 }, (_, index) => (index % 2 ? move(first, left, right) : move(second, right, left))));
		const [l, r] = (await first.read([left, right])).map(Number);
		expect(l + r).toBe(100);
		expect(l).toBe(100);
	});
}

/** The StoreUnavailable a store call ends with (anything else fails the test). */
export async function unavailable(promise: Promise<unknown>): Promise<StoreUnavailable> {
	const error = await promise.then(
		() => undefined,
		(caught: unknown) => caught,
	);
	if (!(error instanceof StoreUnavailable)) throw new Error(`expected a StoreUnavailable, got ${String(error)}`);
	return error;
}
