/**
 * The send records' updates of one step (reserve, mark sent, release), 50 items each: several in
 * flight at once when their keys are apart (Redis's round trips overlap), one after another when
 * they share a key (a number in two chunks keeps its decisions in item order), and all of them
 * ended before a failure is thrown. A store that yields before each update stands in for a round trip.
 */
import type { DurableStore, StoreDecision, StoreGuess } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { sendKeyOf } from '../../nodes/shared/store/sendRecords/recordValues';
import { SendRecords, type RecordedSend } from '../../nodes/shared/store/sendRecords/sendRecords';
import { chunkedUpdates } from '../../nodes/shared/store/sendRecords/chunkedUpdates';
import type { ItemKeys } from '../../nodes/shared/store/sendRecords/decisions';
import { markMaybeApplied } from '../../nodes/shared/store/sendRecords/recordsFailure';

const T0 = Date.parse('2026-11-22T02:30:30.000Z');
const NODE = 'workflow|node';

/** A memory store whose updates each wait a few turns of the microtask queue, counting how many are in flight. */
class RoundTripStore implements DurableStore {
	readonly kind = 'memory' as const;
	readonly label = 'the test store';
	readonly inner = new MemoryStore(() => T0);
	inFlight = 0;
	mostInFlight = 0;
	/** Each update's first key, in the order the updates began and ended; and both in one timeline. */
	readonly began: string[] = [];
	readonly ended: string[] = [];
	readonly events: string[] = [];
	/** Updates whose first key is this one fail, this many times (an update is tried 3 times). */
	failing?: { key: string; times: number };

	async now() {
		return await this.inner.now();
	}

	async read(keys: readonly string[]) {
		return await this.inner.read(keys);
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>, _guess?: StoreGuess): Promise<T> {
		this.inFlight++;
		this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
		this.began.push(keys[0]);
		this.events.push(`begin ${keys[0]}`);
		try {
			for (let turn = 0; turn < 5; turn++) await Promise.resolve();
			if (this.failing && keys[0] === this.failing.key && this.failing.times-- > 0) throw new Error('the connection dropped (injected)');
			return await this.inner.update(keys, decide);
		} finally {
			this.inFlight--;
			this.ended.push(keys[0]);
			this.events.push(`end ${keys[0]}`);
		}
	}
}

const phoneOf = (index: number) => `139${String(index).padStart(8, '0')}`;
const sendsOf = (phones: string[]): RecordedSend[] => phones.map((phone, itemIndex) => ({ itemIndex, phone, message: `message ${itemIndex} to ${phone}` }));
const recordsOn = (store: DurableStore, limits = { perMinute: 100, perHour: 100, perDay: 100 }) =>
	new SendRecords(store, { node: NODE, execution: 'execution-1', runIndex: 0 }, { limits, repeatWindowMinutes: 10 });

describe('send records: the updates of one step', () => {
	it('reserves and marks sent the chunks of distinct numbers several at a time', async () => {
		const store = new RoundTripStore();
		const records = recordsOn(store);
		const decisions = await records.reserve(sendsOf(Array.from({ length: 120 }, (_, index) => phoneOf(index))));
		expect([...decisions.values()].every((decision) => decision.kind === 'send')).toBe(true);
		expect(store.mostInFlight).toBe(3);
		store.mostInFlight = 0;
		for (let itemIndex = 0; itemIndex < 120; itemIndex++) expect(await records.claim(itemIndex)).toBe('go');
		store.mostInFlight = 0;
		expect(await records.markSent(new Map(Array.from({ length: 120 }, (_, itemIndex) => [itemIndex, `task ${itemIndex}`])))).toBeUndefined();
		expect(store.mostInFlight).toBe(3);
		const [first, last] = await store.inner.read([sendKeyOf(NODE, 'execution-1', 0, 0), sendKeyOf(NODE, 'execution-1', 0, 119)]);
		expect([JSON.parse(first as string).state, JSON.parse(last as string).state]).toEqual(['sent', 'sent']);
	});

	it('a number in two chunks: the later chunk waits, and its item is decided after the earlier one', async () => {
		const store = new RoundTripStore();
		const phones = Array.from({ length: 120 }, (_, index) => phoneOf(index));
		phones[110] = phones[5];
		const decisions = await recordsOn(store, { perMinute: 1, perHour: 100, perDay: 100 }).reserve(sendsOf(phones));
		expect(decisions.get(5)).toEqual({ kind: 'send' });
		expect(decisions.get(110)).toMatchObject({ kind: 'limit' });
		// Chunks 0 and 1 together; chunk 2 (items 100-119) only once both ended.
		const [chunk0, chunk1, chunk2] = [0, 50, 100].map((itemIndex) => sendKeyOf(NODE, 'execution-1', 0, itemIndex));
		const at = (event: string) => store.events.indexOf(event);
		expect(store.events.slice(0, 2)).toEqual([`begin ${chunk0}`, `begin ${chunk1}`]);
		expect(at(`begin ${chunk2}`)).toBeGreaterThan(Math.max(at(`end ${chunk0}`), at(`end ${chunk1}`)));
		expect(store.mostInFlight).toBe(2);
	});

	it('when one chunk fails, the others in flight end before the reserve fails, and every reservation is released', async () => {
		const store = new RoundTripStore();
		// The second chunk's update fails all its tries; the release after it works.
		store.failing = { key: sendKeyOf(NODE, 'execution-1', 0, 50), times: 3 };
		const records = recordsOn(store);
		await expect(records.reserve(sendsOf(Array.from({ length: 120 }, (_, index) => phoneOf(index))))).rejects.toMatchObject({ name: 'RecordsFailure', kept: { reserved: [], unknown: [] } });
		// The three chunks' updates (the second tried 3 times) all ended before the release began; the
		// release is of the two chunks applied (the failed one wrote nothing: issue 41 item 3).
		expect(store.began.length).toBe(7);
		expect(store.ended.slice(0, 5).sort()).toEqual(store.began.slice(0, 5).sort());
		const sendKeys = Array.from({ length: 120 }, (_, itemIndex) => sendKeyOf(NODE, 'execution-1', 0, itemIndex));
		const left = (await store.inner.read(sendKeys)).filter((value) => value !== undefined && JSON.parse(value).state === 'reserved');
		expect(left).toEqual([]);
		expect(records.holding()).toEqual([]);
	});
});

describe('chunkedUpdates on its own', () => {
	const itemsOf = (count: number, shared?: (index: number) => string): ItemKeys[] =>
		Array.from({ length: count }, (_, itemIndex) => ({ itemIndex, sendKey: `send ${itemIndex}`, messageKey: `message ${itemIndex}`, windows: [], countKeys: shared ? [shared(itemIndex)] : [] }));

	/** An update that waits until released, recording how many are in flight when each begins. */
	function gatedUpdates() {
		const waiting: Array<() => void> = [];
		const inFlightAtBegin: number[] = [];
		let inFlight = 0;
		const update = async (chunk: ItemKeys[]) => {
			inFlightAtBegin.push(++inFlight);
			await new Promise<void>((resolve) => waiting.push(resolve));
			inFlight--;
			return chunk.map((item) => item.itemIndex);
		};
		const releaseAll = async () => {
			// Each release lets the runner go on; it starts the next wave only once this one ended.
			for (let turn = 0; turn < 200 && waiting.length > 0; turn++) {
				waiting.splice(0).forEach((resolve) => resolve());
				for (let tick = 0; tick < 10; tick++) await Promise.resolve();
			}
		};
		return { update, inFlightAtBegin, releaseAll };
	}

	it('answers nothing for no items, without an update', async () => {
		const update = jest.fn(async () => [] as number[]);
		expect(await chunkedUpdates([], true, update)).toEqual([]);
		expect(update).not.toHaveBeenCalled();
	});

	it('makes one update per 50 items, exactly, and answers in item order', async () => {
		const calls: number[] = [];
		const answers = await chunkedUpdates(itemsOf(100), true, async (chunk) => {
			calls.push(chunk.length);
			return chunk.map((item) => item.itemIndex);
		});
		expect(calls).toEqual([50, 50]);
		expect(answers).toEqual(Array.from({ length: 100 }, (_, index) => index));
	});

	it('has at most 8 updates in flight, in every wave', async () => {
		const { update, inFlightAtBegin, releaseAll } = gatedUpdates();
		const done = chunkedUpdates(itemsOf(16 * 50 + 1), true, update);
		await releaseAll();
		expect(await done).toHaveLength(16 * 50 + 1);
		expect(inFlightAtBegin).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1]);
	});

	it('waits for the updates in flight before one that shares a key', async () => {
		const { update, inFlightAtBegin, releaseAll } = gatedUpdates();
		// Chunks 0 and 1 apart; chunk 2 shares a count key with chunk 0.
		const done = chunkedUpdates(itemsOf(150, (index) => (index < 50 || index >= 100 ? 'count of one number' : `count ${index}`)), true, update);
		await releaseAll();
		await done;
		expect(inFlightAtBegin).toEqual([1, 2, 1]);
		// Without the counts (mark sent) nothing is shared: all three at once.
		const apart = gatedUpdates();
		const ignored = chunkedUpdates(itemsOf(150, () => 'count of one number'), false, apart.update);
		await apart.releaseAll();
		await ignored;
		expect(apart.inFlightAtBegin).toEqual([1, 2, 3]);
	});

	it("names as touched the items of updates applied, or maybe applied (answer lost), not of one the store refused", async () => {
		const items = itemsOf(150);
		const touched = new Set<ItemKeys>();
		const lost = new Error('answer lost');
		markMaybeApplied(lost);
		const failure = chunkedUpdates(items, true, async (chunk) => {
			if (chunk[0].itemIndex === 50) throw new Error('refused');
			if (chunk[0].itemIndex === 100) throw lost;
			return chunk.map((item) => item.itemIndex);
		}, touched);
		await expect(failure).rejects.toThrow('refused');
		expect([...touched].map((item) => item.itemIndex)).toEqual([...Array.from({ length: 50 }, (_, index) => index), ...Array.from({ length: 50 }, (_, index) => 100 + index)]);
	});
});
