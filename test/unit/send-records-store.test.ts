/**
 * The send records' own store code (nodes/shared/store/sendRecords/sendRecords.ts) over a store
 * the test scripts: each update answers, is refused, is applied with its answer lost, or answers
 * something else. What is checked is what the node and the next execution see: the decisions,
 * the RecordsFailure's reason and what it says stays, what the store holds after, the tries and
 * their pauses (jest's fake timers), and on Redis the guess each update gives (a right one saves
 * a read, a stale one is never given). The decisions themselves: test/unit/send-decisions.test.ts.
 */
import { StoreUnavailable, type DurableStore, type StoreDecision, type StoreGuess, type StoreKind } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { countKeyOf, messageKeyOf, sendKeyOf } from '../../nodes/shared/store/sendRecords/recordValues';
import { countWindows } from '../../nodes/shared/store/sendRecords/rules';
import { SendRecords, type RecordRules } from '../../nodes/shared/store/sendRecords/sendRecords';
import { forgetOwedReleases } from '../../nodes/shared/testing';

const T0 = Date.parse('2026-11-22T02:00:00.000Z');
const NODE = 'workflow|node';
const LIMITS = { perMinute: 100, perHour: 100, perDay: 100 };

/** What the next update does: answers, is refused (nothing written), is applied and its answer lost, or is applied and answers `garble(answer)`. */
type Step = 'ok' | 'refuse' | 'lose' | 'decideThenRefuse' | { garble: (answer: unknown) => unknown } | { throws: unknown };

/** The memory store under a script of what each update does; keeps each update's keys and guess, and what the store held then. */
class ScriptedStore implements DurableStore {
	readonly label = 'the scripted store';
	readonly inner: MemoryStore;
	readonly updates: Array<{ keys: string[]; guess?: StoreGuess; held: Array<string | undefined> }> = [];
	script: Step[] = [];
	clock = T0;

	constructor(readonly kind: StoreKind = 'memory') {
		this.inner = new MemoryStore(() => this.clock);
	}

	async now() {
		return await this.inner.now();
	}

	async read(keys: readonly string[]) {
		return await this.inner.read(keys);
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>, guess?: StoreGuess): Promise<T> {
		this.updates.push({ keys: [...keys], guess, held: await this.inner.read(keys) });
		const step = this.script.shift() ?? 'ok';
		if (step === 'refuse') throw new StoreUnavailable(this.label, 'the scripted store refused the update (injected)');
		if (typeof step === 'object' && 'throws' in step) throw step.throws;
		// An SQLite commit refused (busy): decided, then rolled back.
		if (step === 'decideThenRefuse') {
			decide(await this.inner.read(keys), await this.inner.now());
			throw new StoreUnavailable(this.label, 'the commit was refused (injected)');
		}
		const answer = await this.inner.update(keys, decide);
		if (step === 'lose') throw new StoreUnavailable(this.label, 'the answer was lost (injected)', { maybeWritten: true });
		return (typeof step === 'object' ? step.garble(answer) : answer) as T;
	}
}

const send = (itemIndex: number, message = `m${itemIndex}`) => ({ itemIndex, phone: `1390000010${itemIndex}`, message });
const recordsOn = (store: DurableStore, rules: Partial<RecordRules> = {}, execution = 'execution 1') =>
	new SendRecords(store, { node: NODE, execution, runIndex: 0 }, { limits: LIMITS, repeatWindowMinutes: 10, ...rules });
const kinds = (decisions: Map<number, { kind: string }>) => [...decisions.values()].map((decision) => decision.kind);
const sendKey = (itemIndex: number, execution = 'execution 1') => sendKeyOf(NODE, execution, 0, itemIndex);
const failureOf = async (promise: Promise<unknown>) => await promise.then(() => undefined, (error: unknown) => error);

afterEach(() => {
	forgetOwedReleases();
	jest.useRealTimers();
});

describe("each update's answer is checked", () => {
	const unexpected = 'the scripted store answered an update with something unexpected';

	it.each([
		['no answer', () => undefined],
		['an answer of another kind', (answer: unknown) => ({ ...(answer as object), kind: 'other' })],
		['results that are not a list', (answer: unknown) => ({ ...(answer as object), results: 'go' })],
		['results for fewer items', (answer: unknown) => ({ ...(answer as object), results: [] })],
	])('%s, after the update was applied: the reserve fails, and what it may have reserved is released', async (_, garble) => {
		const store = new ScriptedStore();
		store.script = [{ garble }, { garble }, { garble }];
		const failure = await failureOf(recordsOn(store).reserve([send(0), send(1)]));
		expect(failure).toMatchObject({ name: 'RecordsFailure', store: store.label, reason: unexpected, kept: { reserved: [], unknown: [], notStarted: [] } });
		// Three tries, then the release of both items.
		expect(store.updates).toHaveLength(4);
		expect(await store.read([sendKey(0), sendKey(1)])).toEqual([undefined, undefined]);
		expect(kinds(await recordsOn(store, {}, 'execution 2').reserve([send(0), send(1)]))).toEqual(['send', 'send']);
	});

	it("an answer the store gave without deciding (another update's): nothing was written, so nothing is released", async () => {
		const store = new ScriptedStore();
		let earlier: unknown;
		await recordsOn(store, {}, 'execution 0').reserve([send(5)]);
		const update = store.update.bind(store);
		jest.spyOn(store, 'update').mockImplementationOnce(async (keys, decide) => (earlier = await update(keys, decide)));
		await recordsOn(store, {}, 'execution 0').reserve([send(6)]);
		jest.spyOn(store, 'update').mockImplementation(async (keys) => {
			store.updates.push({ keys: [...keys], held: [] });
			return earlier as never;
		});
		const failure = await failureOf(recordsOn(store).reserve([send(0)]));
		expect(failure).toMatchObject({ reason: unexpected, kept: { reserved: [] } });
		expect(store.updates.slice(2)).toHaveLength(3);
	});

	it('a record the decision cannot read fails the reserve after 3 tries; nothing was written, so nothing is released', async () => {
		const store = new ScriptedStore();
		const messageKey = messageKeyOf(NODE, send(0).phone, send(0).message);
		await store.inner.update([messageKey], () => ({ writes: [{ key: messageKey, value: '"OK"' }], result: undefined }));
		expect(await failureOf(recordsOn(store).reserve([send(0)]))).toMatchObject({ reason: 'a send record (sms-message) is not an object', kept: { reserved: [] } });
		expect(store.updates).toHaveLength(3);
	});

	it('an update decided and then refused by the store (a commit rolled back) wrote nothing: nothing is released', async () => {
		const store = new ScriptedStore();
		store.script = ['decideThenRefuse', 'decideThenRefuse', 'decideThenRefuse'];
		expect(await failureOf(recordsOn(store).reserve([send(0)]))).toMatchObject({ reason: 'the commit was refused (injected)', kept: { reserved: [] } });
		expect(store.updates).toHaveLength(3);
	});

	it('names exactly the keys its items need: the send, the message and the counts of its number', async () => {
		const store = new ScriptedStore();
		await recordsOn(store).reserve([send(0)]);
		const counts = countWindows(LIMITS, send(0).phone, T0).map((window) => countKeyOf(NODE, send(0).phone, window));
		expect(store.updates[0].keys).toEqual([sendKey(0), messageKeyOf(NODE, send(0).phone, send(0).message), ...counts]);
	});

	it('a store that fails by throwing something not an Error is named by what it threw', async () => {
		const store = new ScriptedStore();
		store.script = [{ throws: 'socket hang up' }, { throws: 'socket hang up' }, { throws: 'socket hang up' }];
		expect(await failureOf(recordsOn(store).reserve([send(0)]))).toMatchObject({ name: 'RecordsFailure', reason: 'socket hang up', kept: { reserved: [] } });
	});
});

describe('tries', () => {
	it('an update is tried 3 times: a store that refuses twice and then answers reserves', async () => {
		const store = new ScriptedStore();
		store.script = ['refuse', 'refuse'];
		expect(kinds(await recordsOn(store).reserve([send(0)]))).toEqual(['send']);
		expect(store.updates).toHaveLength(3);
	});

	it('a store that refuses 3 times fails the reserve, having written nothing: nothing to release', async () => {
		const store = new ScriptedStore();
		store.script = ['refuse', 'refuse', 'refuse'];
		const failure = await failureOf(recordsOn(store).reserve([send(0)]));
		expect(failure).toMatchObject({ reason: 'the scripted store refused the update (injected)', kept: { reserved: [] }, certain: false });
		expect(store.updates).toHaveLength(3);
	});

	it('waits 20 ms before the second try and 200 ms before the third (a lost connection is seen closed only later)', async () => {
		jest.useFakeTimers();
		const store = new ScriptedStore();
		store.script = ['refuse', 'refuse'];
		const reserved = recordsOn(store).reserve([send(0)]);
		const tries = async (ms: number) => {
			await jest.advanceTimersByTimeAsync(ms);
			return store.updates.length;
		};
		expect(await tries(0)).toBe(1);
		expect(await tries(19)).toBe(1);
		expect(await tries(1)).toBe(2);
		expect(await tries(199)).toBe(2);
		expect(await tries(1)).toBe(3);
		expect(kinds(await reserved)).toEqual(['send']);
	});

	it('a decided update the store failed after (its write may have landed) is released; one it refused certainly wrote nothing', async () => {
		const applied = new ScriptedStore();
		applied.script = [{ throws: new Error('the reply was garbled') }, 'lose', 'lose'];
		expect(await failureOf(recordsOn(applied).reserve([send(0)]))).toMatchObject({ reason: 'the answer was lost (injected)', kept: { reserved: [] } });
		// Tried 3 times, each applied: released after.
		expect(applied.updates).toHaveLength(4);
		expect(await applied.read([sendKey(0)])).toEqual([undefined]);
	});
});

describe('what a failure says stays', () => {
	it('a reserve whose release fails too names the items reserved, certainly there when the store refused the release', async () => {
		const store = new ScriptedStore();
		store.script = ['lose', 'lose', 'lose', 'refuse', 'refuse', 'refuse'];
		const failure = await failureOf(recordsOn(store).reserve([send(0), send(1)]));
		expect(failure).toMatchObject({ kept: { reserved: [0, 1], unknown: [], notStarted: [] }, certain: true });
	});

	it('a reserve whose release answer is lost names them as maybe there', async () => {
		const store = new ScriptedStore();
		store.script = ['lose', 'lose', 'lose', 'lose', 'lose', 'lose'];
		expect(await failureOf(recordsOn(store).reserve([send(0)]))).toMatchObject({ kept: { reserved: [0] }, certain: false });
	});

	it('a release that fails names the started items apart from those only reserved', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0), send(1), send(2)]);
		expect(await nodeRun.claim(0)).toBe('go');
		store.script = ['refuse', 'refuse', 'refuse'];
		const failure = await failureOf(nodeRun.release([0, 1]));
		expect(failure).toMatchObject({ name: 'RecordsFailure', kept: { reserved: [1], unknown: [], notStarted: [0] }, certain: true });
		expect(nodeRun.holding()).toEqual([2]);
		store.script = ['lose', 'lose', 'lose'];
		expect(await failureOf(nodeRun.release([2]))).toMatchObject({ kept: { reserved: [2] }, certain: false });
	});

	it("a release of items it does not hold, or of none, asks nothing of the store", async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.release([]);
		await nodeRun.release([4]);
		await nodeRun.releaseUnstarted();
		expect(store.updates).toHaveLength(0);
	});

	it('marking sent names no counts, and items it does not hold are no update', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		expect(await nodeRun.claim(0)).toBe('go');
		expect(await nodeRun.markSent(new Map([[0, 'task-0']]))).toBeUndefined();
		expect(store.updates.at(-1)?.keys).toEqual([sendKey(0), messageKeyOf(NODE, send(0).phone, send(0).message)]);
		const before = store.updates.length;
		expect(await nodeRun.markSent(new Map([[7, 'task-7']]))).toBeUndefined();
		expect(store.updates.length).toBe(before);
	});

	it('marking sent that fails names the items as outcome unknown; they stay guarded', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0), send(1)]);
		expect(await Promise.all([nodeRun.claim(0), nodeRun.claim(1)])).toEqual(['go', 'go']);
		store.script = ['refuse', 'refuse', 'refuse'];
		expect(await nodeRun.markSent(new Map([[0, 'task-0'], [1, null]]))).toMatchObject({ name: 'RecordsFailure', reason: 'the scripted store refused the update (injected)', kept: { reserved: [], unknown: [0, 1], notStarted: [] } });
		expect(kinds(await recordsOn(store, {}, 'execution 2').reserve([send(0), send(1)]))).toEqual(['repeat', 'repeat']);
		expect(await nodeRun.markSent(new Map([[0, 'task-0']]))).toBeUndefined();
		expect((await recordsOn(store).reserve([send(0)])).get(0)).toEqual({ kind: 'earlier', outcome: 'sent', taskId: 'task-0' });
	});

	it('reserving nothing asks nothing of the store: a store that is down does not fail an empty batch', async () => {
		const store = new ScriptedStore();
		jest.spyOn(store, 'now').mockRejectedValue(new StoreUnavailable(store.label, 'down (injected)'));
		expect(await recordsOn(store).reserve([])).toEqual(new Map());
	});

	it('claims that fail, and whose release is refused, say their reservations are certainly there; a release answer lost says maybe', async () => {
		for (const [releaseStep, certain] of [['refuse', true], ['lose', false]] as const) {
			const store = new ScriptedStore();
			const nodeRun = recordsOn(store);
			await nodeRun.reserve([send(0)]);
			store.script = ['refuse', 'refuse', 'refuse', releaseStep, releaseStep, releaseStep];
			expect(await failureOf(nodeRun.claim(0))).toMatchObject({ name: 'RecordsFailure', kept: { reserved: [0] }, certain });
		}
		// Released after all: nothing stays, so nothing is certain.
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		store.script = ['lose', 'lose', 'lose'];
		expect(await failureOf(nodeRun.claim(0))).toMatchObject({ kept: { reserved: [], notStarted: [] }, certain: false });
	});

	it('the store giving a time that is not a number fails the reserve before any update', async () => {
		const store = new ScriptedStore();
		store.clock = Number.NaN;
		expect(await failureOf(recordsOn(store).reserve([send(0)]))).toMatchObject({ name: 'RecordsFailure', reason: 'the scripted store gave a time that is not a number', kept: { reserved: [] } });
		expect(store.updates).toHaveLength(0);
	});
});

describe('claims', () => {
	it('of an item without a reservation are refused, naming the item, without asking the store', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store, { limits: { perMinute: 1, perHour: 5, perDay: 10 } });
		// A repeat and a send over the limit hold no reservation.
		const earlier = recordsOn(store, {}, 'execution 0');
		await earlier.reserve([send(0)]);
		expect(await earlier.claim(0)).toBe('go');
		expect(kinds(await nodeRun.reserve([send(0), send(1), { ...send(1, 'again'), itemIndex: 2 }]))).toEqual(['repeat', 'send', 'limit']);
		expect(nodeRun.holding()).toEqual([1]);
		const before = store.updates.length;
		for (const itemIndex of [0, 2, 5]) await expect(nodeRun.claim(itemIndex)).rejects.toThrow(`Item ${itemIndex + 1} has no send reservation`);
		expect(store.updates.length).toBe(before);
	});

	it('of an item released while the claim waited for the one before fail, naming the item; the others go', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0), send(1), send(2)]);
		const first = nodeRun.claim(0);
		const waiting = [nodeRun.claim(1), nodeRun.claim(2)];
		const released = nodeRun.release([1]);
		expect(await first).toBe('go');
		const [second, third] = await Promise.allSettled(waiting);
		expect(second).toMatchObject({ status: 'rejected', reason: new Error('Item 2 has no send reservation') });
		expect(third).toEqual({ status: 'fulfilled', value: 'go' });
		await released;
		expect(nodeRun.holding()).toEqual([0, 2]);
	});
});

describe('releases this run owes', () => {
	it('are taken back at the end of the run once the store answers, and then no more', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0), send(1)]);
		store.script = ['refuse', 'refuse', 'refuse'];
		await expect(nodeRun.release([0])).rejects.toMatchObject({ kept: { reserved: [0] } });
		expect(await store.read([sendKey(0)])).not.toEqual([undefined]);
		// The end of the run: item 1 released, and the owed item 0 taken back.
		await nodeRun.releaseUnstarted();
		expect(await store.read([sendKey(0), sendKey(1)])).toEqual([undefined, undefined]);
		const before = store.updates.length;
		// Paid: neither this run's end again nor the next reserve on the store asks again.
		expect(await nodeRun.takeBack()).toBe(true);
		await recordsOn(store, {}, 'execution 2').reserve([send(3)]);
		expect(store.updates.length - before).toBe(1);
	});

	it("paid at the end of the run are not asked of it again by this process's next reserve", async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		store.script = ['refuse', 'refuse', 'refuse'];
		await expect(nodeRun.release([0])).rejects.toMatchObject({ kept: { reserved: [0] } });
		await nodeRun.releaseUnstarted();
		const takeBack = jest.spyOn(nodeRun, 'takeBack');
		await recordsOn(store, {}, 'execution 2').reserve([send(3)]);
		expect(takeBack).not.toHaveBeenCalled();
	});

	it('the end of a run gives back only the reservations whose paid call never started', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0), send(1)]);
		expect(await nodeRun.claim(0)).toBe('go');
		await nodeRun.releaseUnstarted();
		expect(nodeRun.holding()).toEqual([0]);
		expect(kinds(await recordsOn(store, {}, 'execution 2').reserve([send(0), send(1)]))).toEqual(['repeat', 'send']);
	});

	it('that still fail stay owed: the run says so, and the next reserve on the store takes them back', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		store.script = Array(6).fill('refuse');
		await expect(nodeRun.release([0])).rejects.toMatchObject({ kept: { reserved: [0] } });
		expect(await nodeRun.takeBack()).toBe(false);
		expect(await store.read([sendKey(0)])).not.toEqual([undefined]);
		await recordsOn(store, {}, 'execution 2').reserve([send(3)]);
		expect(await store.read([sendKey(0)])).toEqual([undefined]);
	});
});

describe('sends marked while the batch goes on (markSentSoon)', () => {
	const items = (count: number) => Array.from({ length: count }, (_, itemIndex) => itemIndex);
	const markedKeys = (store: ScriptedStore, from: number) => store.updates.slice(from).flatMap((update) => update.keys);
	const taskIds = (itemIndexes: number[]) => new Map(itemIndexes.map((itemIndex) => [itemIndex, `task-${itemIndex}`]));
	/** Each item's send taken by the gateway, as send.ts tells the records. */
	const sentSoon = (nodeRun: SendRecords, itemIndexes: number[]) => itemIndexes.forEach((itemIndex) => nodeRun.markSentSoon(itemIndex, `task-${itemIndex}`));
	/** A turn of the event loop: a mark started meanwhile has reached the store. */
	const tick = async () => await new Promise((resume) => setImmediate(resume));

	/** A run on Redis: `reserved` items reserved, the first `claimedCount` of them claimed. */
	async function onRedis(reserved: number, claimedCount: number) {
		const store = new ScriptedStore('redis');
		const nodeRun = recordsOn(store);
		await nodeRun.reserve(items(reserved).map((itemIndex) => send(itemIndex)));
		for (const itemIndex of items(claimedCount)) expect(await nodeRun.claim(itemIndex)).toBe('go');
		return { store, nodeRun };
	}

	async function claimed(store: ScriptedStore, count: number) {
		const nodeRun = recordsOn(store);
		await nodeRun.reserve(items(count).map((itemIndex) => send(itemIndex)));
		expect(new Set(await Promise.all(items(count).map(async (itemIndex) => await nodeRun.claim(itemIndex))))).toEqual(new Set(['go']));
		return nodeRun;
	}

	it('marks 50 at a time while sends go on; the end marks only the rest, and every record says sent', async () => {
		const store = new ScriptedStore();
		const nodeRun = await claimed(store, 120);
		const before = store.updates.length;
		sentSoon(nodeRun, items(120));
		await tick();
		// The first 50 went to the store at the 50th; the next 70 waited while that mark was under way.
		expect(store.updates.length).toBe(before + 1);
		expect(store.updates[before].keys).toContain(sendKey(49));
		expect(store.updates[before].keys).not.toContain(sendKey(50));
		expect(await nodeRun.markSent(taskIds(items(120)))).toBeUndefined();
		const atEnd = markedKeys(store, before + 1);
		expect(atEnd).not.toContain(sendKey(0));
		expect(atEnd).toContain(sendKey(50));
		expect(atEnd).toContain(sendKey(119));
		const again = await recordsOn(store).reserve([send(0), send(119)]);
		expect([...again.values()]).toEqual([
			{ kind: 'earlier', outcome: 'sent', taskId: 'task-0' },
			{ kind: 'earlier', outcome: 'sent', taskId: 'task-119' },
		]);
	});

	it('once a group is marked, the next 50 sends make the next group, and only they', async () => {
		const store = new ScriptedStore();
		const nodeRun = await claimed(store, 100);
		const before = store.updates.length;
		sentSoon(nodeRun, items(50));
		await tick();
		sentSoon(nodeRun, [50]);
		await tick();
		expect(store.updates.length).toBe(before + 1);
		sentSoon(nodeRun, items(100).slice(51));
		await tick();
		expect(store.updates.length).toBe(before + 2);
		const second = store.updates[before + 1].keys;
		expect(second).toContain(sendKey(50));
		expect(second).toContain(sendKey(99));
		expect(second).not.toContain(sendKey(49));
	});

	it('fewer than 50 sends wait for the end, which marks them in one update; a claim meanwhile carries none of them (only on Redis)', async () => {
		const store = new ScriptedStore();
		const nodeRun = recordsOn(store);
		await nodeRun.reserve(items(50).map((itemIndex) => send(itemIndex)));
		for (const itemIndex of items(49)) expect(await nodeRun.claim(itemIndex)).toBe('go');
		const before = store.updates.length;
		sentSoon(nodeRun, items(49));
		await tick();
		expect(store.updates.length).toBe(before);
		expect(await nodeRun.claim(49)).toBe('go');
		expect(store.updates[before].keys).not.toContain(sendKey(0));
		expect(await nodeRun.markSent(taskIds(items(49)))).toBeUndefined();
		expect(store.updates.length).toBe(before + 2);
	});

	it("on Redis sends ride in the next claims' update, each once (a group of their own would hold the server the claims wait for); the end marks only the rest", async () => {
		const { store, nodeRun } = await onRedis(60, 10);
		const before = store.updates.length;
		sentSoon(nodeRun, items(10));
		await tick();
		expect(store.updates.length).toBe(before);
		expect(await nodeRun.claim(10)).toBe('go');
		expect(store.updates[before].keys).toEqual(expect.arrayContaining([sendKey(10), ...items(10).map((itemIndex) => sendKey(itemIndex))]));
		expect(await nodeRun.claim(11)).toBe('go');
		expect(store.updates[before + 1].keys).not.toContain(sendKey(0));
		for (const itemIndex of items(60).slice(12)) expect(await nodeRun.claim(itemIndex)).toBe('go');
		const atEnd = store.updates.length;
		sentSoon(nodeRun, items(60).slice(10));
		expect(await nodeRun.markSent(taskIds(items(60)))).toBeUndefined();
		expect(markedKeys(store, atEnd)).not.toContain(sendKey(0));
		expect(markedKeys(store, atEnd)).toEqual(expect.arrayContaining([sendKey(10), sendKey(59)]));
		const again = await recordsOn(store).reserve([send(0), send(9), send(59)]);
		expect([...again.values()].map((decision) => 'taskId' in decision && decision.taskId)).toEqual(['task-0', 'task-9', 'task-59']);
	});

	it('on Redis a send told to be marked that the records do not hold is dropped, not an error of the next claim', async () => {
		const store = new ScriptedStore('redis');
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		nodeRun.markSentSoon(7, 'task-7');
		expect(await nodeRun.claim(0)).toBe('go');
		expect(store.updates.at(-1)?.keys).not.toContain(sendKey(7));
	});

	it("on Redis a claims' update carries its own items and as many waiting sends as fill it to 50; the rest wait", async () => {
		const { store, nodeRun } = await onRedis(61, 60);
		sentSoon(nodeRun, items(60));
		const before = store.updates.length;
		expect(await nodeRun.claim(60)).toBe('go');
		expect(store.updates[before].keys).toEqual(expect.arrayContaining([sendKey(60), sendKey(0), sendKey(48)]));
		expect(store.updates[before].keys).not.toContain(sendKey(49));
		expect(await nodeRun.markSent(taskIds(items(61)))).toBeUndefined();
		const atEnd = markedKeys(store, before + 1);
		expect(atEnd).toEqual(expect.arrayContaining([sendKey(49), sendKey(60)]));
		expect(atEnd).not.toContain(sendKey(48));
	});

	it("on Redis sends that rode in a failed claims' update are marked at the end, and never released with the claim", async () => {
		const { store, nodeRun } = await onRedis(6, 5);
		sentSoon(nodeRun, items(5));
		store.script = ['lose', 'refuse', 'refuse'];
		jest.useFakeTimers();
		const failedClaim = failureOf(nodeRun.claim(5));
		await jest.advanceTimersByTimeAsync(1_000);
		expect(await failedClaim).toMatchObject({ name: 'RecordsFailure' });
		const atEnd = store.updates.length;
		expect(await nodeRun.markSent(taskIds(items(5)))).toBeUndefined();
		expect(markedKeys(store, atEnd)).toEqual(expect.arrayContaining(items(5).map((itemIndex) => sendKey(itemIndex))));
		const again = await recordsOn(store).reserve(items(6).map((itemIndex) => send(itemIndex)));
		expect([...again.values()].map((decision) => ('taskId' in decision ? decision.taskId : decision.kind))).toEqual(['task-0', 'task-1', 'task-2', 'task-3', 'task-4', 'send']);
	});

	it('a group whose mark failed is marked at the end; a failure there still names it', async () => {
		const store = new ScriptedStore();
		const nodeRun = await claimed(store, 50);
		store.script = ['refuse', 'refuse', 'refuse'];
		jest.useFakeTimers();
		sentSoon(nodeRun, items(50));
		const end = nodeRun.markSent(taskIds(items(50)));
		await jest.advanceTimersByTimeAsync(1_000);
		expect(await end).toBeUndefined();
		expect((await recordsOn(store).reserve([send(7)])).get(7)).toEqual({ kind: 'earlier', outcome: 'sent', taskId: 'task-7' });

		const otherStore = new ScriptedStore();
		const other = await claimed(otherStore, 50);
		otherStore.script = Array.from({ length: 6 }, () => 'refuse' as const);
		sentSoon(other, items(50));
		const failed = other.markSent(taskIds(items(50)));
		await jest.advanceTimersByTimeAsync(1_000);
		expect(await failed).toMatchObject({ name: 'RecordsFailure', kept: { unknown: items(50) } });
	});
});

describe('the records kept', () => {
	it('hold the repeat window they were made with', () => {
		expect(recordsOn(new ScriptedStore(), { repeatWindowMinutes: 42 }).repeatWindowMinutes).toBe(42);
	});

	it('keep a send a day, or as long as a longer repeat window', async () => {
		const store = new ScriptedStore();
		await recordsOn(store, { repeatWindowMinutes: 10 }, 'short').reserve([send(0)]);
		await recordsOn(store, { repeatWindowMinutes: 48 * 60 }, 'long').reserve([send(1)]);
		store.clock = T0 + 24 * 3_600_000 - 1;
		expect((await store.read([sendKey(0, 'short'), sendKey(1, 'long')])).map((value) => value !== undefined)).toEqual([true, true]);
		store.clock = T0 + 24 * 3_600_000;
		expect((await store.read([sendKey(0, 'short'), sendKey(1, 'long')])).map((value) => value !== undefined)).toEqual([false, true]);
		store.clock = T0 + 48 * 3_600_000;
		expect(await store.read([sendKey(1, 'long')])).toEqual([undefined]);
	});

	it('a negative repeat window is none: the message is kept under its window-0 key, and repeats are not refused', async () => {
		const store = new ScriptedStore();
		await recordsOn(store, { repeatWindowMinutes: -5 }).reserve([send(0)]);
		expect(await store.read([messageKeyOf(NODE, send(0).phone, send(0).message)])).toEqual([undefined]);
		expect(await store.read([messageKeyOf(NODE, send(0).phone, `no window|${send(0).message}`)])).not.toEqual([undefined]);
		expect(kinds(await recordsOn(store, {}, 'execution 2').reserve([send(0)]))).toEqual(['send']);
	});
});

describe('on Redis, each update guesses what the store holds (saving a read), never wrongly', () => {
	const rightGuesses = (store: ScriptedStore) => store.updates.filter(({ guess }) => guess !== undefined).every(({ guess, held }) => JSON.stringify(guess?.values) === JSON.stringify(held));

	it("a claim guesses its item's keys as the reserve left them, at the store's time", async () => {
		const store = new ScriptedStore('redis');
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		expect(store.updates[0].guess).toBeUndefined();
		store.clock += 5_000;
		expect(await nodeRun.claim(0)).toBe('go');
		expect(store.updates[1].guess?.values).toEqual(store.updates[1].held);
		expect(store.updates[1].guess?.now).toBeGreaterThanOrEqual(T0);
		expect(store.updates[1].guess?.now).toBeLessThan(T0 + 5_000);
		expect(rightGuesses(store)).toBe(true);
	});

	it('after an update whose answer was lost, the next try reads instead of guessing', async () => {
		const store = new ScriptedStore('redis');
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		store.script = ['lose'];
		expect(await nodeRun.claim(0)).toBe('go');
		expect(store.updates.map(({ guess }) => guess !== undefined)).toEqual([false, true, false]);
		expect(rightGuesses(store)).toBe(true);
	});

	it("values read before (the opt-out list) let a claim's gate guess its keys too", async () => {
		const store = new ScriptedStore('redis');
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0), send(1)]);
		const gate = (key: string) => ({ keys: [key], stop: (value: (key: string) => string | undefined) => value(key) });
		nodeRun.readBefore(['opt-out|a'], [undefined]);
		expect(await nodeRun.claim(0, gate('opt-out|a'))).toBe('go');
		expect(await nodeRun.claim(1, gate('opt-out|b'))).toBe('go');
		expect(store.updates.slice(1).map(({ guess }) => guess !== undefined)).toEqual([true, false]);
		expect(rightGuesses(store)).toBe(true);
	});

	it('other stores read locally: they get no guess, and values read before change nothing', async () => {
		const store = new ScriptedStore('sqlite');
		const nodeRun = recordsOn(store);
		await nodeRun.reserve([send(0)]);
		nodeRun.readBefore(['opt-out|a'], ['1']);
		expect(await nodeRun.claim(0)).toBe('go');
		expect(store.updates.map(({ guess }) => guess)).toEqual([undefined, undefined]);
	});
});
