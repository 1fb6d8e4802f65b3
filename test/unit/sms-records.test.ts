/**
 * The SMS send records on a durable store (the memory one here; test/transport/sendRecords.test.ts
 * runs the same rules on every store): the repeat window, the per-number calendar windows, and
 * the states of a send: reserved, outcome unknown, sent, released.
 */
import { StoreUnavailable, type DurableStore, type StoreDecision, type StoreGuess } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { valueTag } from '../../nodes/shared/store/keyName';
import { countKeyOf, messageKeyOf, sendKeyOf } from '../../nodes/shared/store/sendRecords/recordValues';
import { countWindows } from '../../nodes/shared/store/sendRecords/rules';
import { SendRecords, type RecordRules } from '../../nodes/shared/store/sendRecords/sendRecords';

const LIMITS = { perMinute: 100, perHour: 100, perDay: 100 };
const send = { itemIndex: 0, phone: '13900000001', message: 'same message' };
const minutes = (n: number) => n * 60_000;
const T0 = Date.parse('2026-11-22T02:00:00.000Z');

/** A store whose clock the test sets. */
function clockedStore(at = T0) {
	const clock = { at };
	return { clock, store: new MemoryStore(() => clock.at) };
}

/** The records of one node run: execution and run index as n8n gives them. */
function records(store: DurableStore, execution: string, rules: Partial<RecordRules> = {}, runIndex = 0) {
	return new SendRecords(store, { node: 'workflow|node', execution, runIndex }, { limits: LIMITS, repeatWindowMinutes: 10, ...rules });
}
const kinds = (decisions: Map<number, { kind: string }>) => [...decisions.values()].map((decision) => decision.kind);

/** Reserves, claims and marks sent: one message really sent. */
async function sendThrough(nodeRun: SendRecords, sends: Array<typeof send>) {
	const decisions = await nodeRun.reserve(sends);
	const sent = new Map<number, string>();
	for (const [itemIndex, decision] of decisions) {
		if (decision.kind === 'send' && (await nodeRun.claim(itemIndex)) === 'go') sent.set(itemIndex, `task-${itemIndex}`);
	}
	await nodeRun.markSent(sent);
	return decisions;
}

describe('repeat window', () => {
	async function decisionAfter(elapsedMs: number) {
		const { clock, store } = clockedStore();
		await sendThrough(records(store, 'execution 1'), [send]);
		clock.at += elapsedMs;
		return (await records(store, 'execution 2').reserve([send])).get(0)?.kind;
	}

	it.each([0, 1, 5, 9, 9.99])('another execution %d minutes later is a repeat', async (elapsed) => {
		expect(await decisionAfter(minutes(elapsed))).toBe('repeat');
	});

	it.each([10, 11, 60])('another execution %i minutes later sends', async (elapsed) => {
		expect(await decisionAfter(minutes(elapsed))).toBe('send');
	});

	it("the same execution's next run (a loop) sends the same message again", async () => {
		const { store } = clockedStore();
		await sendThrough(records(store, 'execution 1'), [send]);
		expect(kinds(await records(store, 'execution 1', {}, 1).reserve([send]))).toEqual(['send']);
	});

	it('the same item of the same run of the same execution (a re-run elsewhere) gets the earlier outcome back', async () => {
		const { store } = clockedStore();
		await sendThrough(records(store, 'execution 1'), [send]);
		expect((await records(store, 'execution 1').reserve([send])).get(0)).toEqual({ kind: 'earlier', outcome: 'sent', taskId: 'task-0' });
	});

	it('a window of 0 keeps no message: another execution sends again', async () => {
		const { store } = clockedStore();
		await sendThrough(records(store, 'execution 1', { repeatWindowMinutes: 0 }), [send]);
		expect(kinds(await records(store, 'execution 2', { repeatWindowMinutes: 0 }).reserve([send]))).toEqual(['send']);
	});
});

describe('per-number limits (fixed calendar windows, at the store\'s time)', () => {
	it('items of one run take the counts in item order; the one over the limit is refused and takes none', async () => {
		const { store } = clockedStore();
		const sends = [0, 1, 2].map((itemIndex) => ({ itemIndex, phone: '13900000002', message: `m${itemIndex}` }));
		const decisions = await records(store, 'execution 1', { limits: { perMinute: 2, perHour: 5, perDay: 10 } }).reserve(sends);
		expect(kinds(decisions)).toEqual(['send', 'send', 'limit']);
		expect(decisions.get(2)).toEqual({ kind: 'limit', problem: 'would be message 3 to 13900000002 in this calendar minute; this node allows 2' });
	});

	it('the next calendar minute allows again; the day is China time', async () => {
		const { clock, store } = clockedStore(Date.parse('2026-11-22T15:59:30.000Z'));
		const limits = { perMinute: 1, perHour: 5, perDay: 1 };
		await sendThrough(records(store, 'e1', { limits }), [{ ...send, message: 'a' }]);
		clock.at = Date.parse('2026-11-22T15:59:59.000Z');
		expect((await records(store, 'e2', { limits }).reserve([{ ...send, message: 'b' }])).get(0)).toMatchObject({ kind: 'limit', problem: expect.stringMatching(/minute/) });
		clock.at = Date.parse('2026-11-22T16:00:00.000Z'); // midnight in China: a new minute, hour and day
		expect(kinds(await records(store, 'e3', { limits }).reserve([{ ...send, message: 'c' }]))).toEqual(['send']);
	});

	it('releasing a send that certainly failed gives back its counts and its message', async () => {
		const { store } = clockedStore();
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		const nodeRun = records(store, 'execution 1', { limits });
		await nodeRun.reserve([send]);
		expect(await nodeRun.claim(0)).toBe('go');
		await nodeRun.release([0]);
		await nodeRun.release([0]); // twice is once
		expect(kinds(await records(store, 'execution 2', { limits }).reserve([send]))).toEqual(['send']);
	});

	describe('the counts a send took are listed by tag, never by their key (which holds the number)', () => {
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		const node = 'workflow|node';
		const countKeys = () => countWindows(limits, send.phone, T0).map((window) => countKeyOf(node, send.phone, window));
		const recordKeys = [sendKeyOf(node, 'execution 1', 0, 0), messageKeyOf(node, send.phone, send.message)];

		it('in the send record and the message record', async () => {
			const { store } = clockedStore();
			await records(store, 'execution 1', { limits }).reserve([send]);
			const [sendRecord, message] = await store.read(recordKeys);
			for (const value of [sendRecord, message]) expect(value).not.toContain(send.phone);
			expect(JSON.parse(sendRecord as string)).toMatchObject({ counted: countKeys().map(valueTag) });
		});

		/** Puts the count keys themselves in the lists, as versions before tags wrote them. */
		async function asWrittenBefore(store: DurableStore) {
			const plain = (value: string | undefined) => value?.replace(/"counted":\[[^\]]*\]/g, `"counted":${JSON.stringify(countKeys())}`);
			await store.update(recordKeys, (values) => ({ writes: recordKeys.map((key, index) => ({ key, value: plain(values[index]) as string })), result: undefined }));
			expect((await store.read(recordKeys)).every((value) => value?.includes(countKeys()[0]))).toBe(true);
		}

		it('a record written before, listing the keys, still gives its counts back on release', async () => {
			const { store } = clockedStore();
			const nodeRun = records(store, 'execution 1', { limits });
			await nodeRun.reserve([send]);
			await asWrittenBefore(store);
			await nodeRun.release([0]);
			expect(kinds(await records(store, 'execution 2', { limits }).reserve([{ ...send, message: 'other' }]))).toEqual(['send']);
		});

		it('a reservation written before, listing the keys, gives its counts back when another execution takes it over', async () => {
			const { store } = clockedStore();
			await records(store, 'execution 1', { limits }).reserve([send]);
			await asWrittenBefore(store);
			const next = records(store, 'execution 2', { limits });
			expect(kinds(await next.reserve([send]))).toEqual(['send']);
			// The taker counted the message once: the minute's one message is its own.
			expect(kinds(await records(store, 'execution 3', { limits }).reserve([{ ...send, message: 'other' }]))).toEqual(['limit']);
			await next.release([0]);
			expect(kinds(await records(store, 'execution 4', { limits }).reserve([{ ...send, message: 'other' }]))).toEqual(['send']);
		});
	});
});

describe('states across executions', () => {
	it('an outcome unknown (the paid call started) stays: another execution skips the message', async () => {
		const { store } = clockedStore();
		const first = records(store, 'execution 1');
		await first.reserve([send]);
		await first.claim(0);
		expect(kinds(await records(store, 'execution 2').reserve([send]))).toEqual(['repeat']);
	});

	it("reservations a run never started (it stopped, or its worker died) are taken over by the next execution, counts included", async () => {
		const { store } = clockedStore();
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		const crashed = records(store, 'execution 1', { limits });
		expect(kinds(await crashed.reserve([send]))).toEqual(['send']);
		const next = records(store, 'execution 2', { limits });
		expect(kinds(await next.reserve([send]))).toEqual(['send']);
		expect(await next.claim(0)).toBe('go');
		// The first run, were it still alive, finds its send taken over and does not send it.
		expect(await crashed.claim(0)).toBe('taken');
		await crashed.release([0]);
		// One message counted in the minute: a third message to the number is refused.
		expect((await records(store, 'execution 3', { limits }).reserve([{ ...send, message: 'other' }])).get(0)?.kind).toBe('limit');
	});

	it('a claim takes back a message another execution only reserved: the first claim wins, and that execution stopping drops nothing', async () => {
		const { store } = clockedStore();
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		const first = records(store, 'execution 1', { limits });
		const second = records(store, 'execution 2', { limits });
		expect(kinds(await first.reserve([send]))).toEqual(['send']);
		// The second takes the reservation over, as if the first had stopped; but the first goes on and claims first.
		expect(kinds(await second.reserve([send]))).toEqual(['send']);
		expect(await first.claim(0)).toBe('go');
		// The second stops before its sends (another item was refused) and lets its reservations go.
		await second.releaseUnstarted();
		await first.markSent(new Map([[0, 'task-1']]));
		// The message stays the first's, sent; one message counted in the minute.
		expect(kinds(await records(store, 'execution 3', { limits }).reserve([send]))).toEqual(['repeat']);
		expect(kinds(await records(store, 'execution 4', { limits }).reserve([{ ...send, message: 'other' }]))).toEqual(['limit']);
	});

	it('a claim finds the message taken when the other execution claimed it first', async () => {
		const { store } = clockedStore();
		const first = records(store, 'execution 1');
		const second = records(store, 'execution 2');
		await first.reserve([send]);
		await second.reserve([send]);
		expect(await second.claim(0)).toBe('go');
		expect(await first.claim(0)).toBe('taken');
		expect(first.holding()).toEqual([]);
	});

	it('with Repeat Window 0, two executions that reserved the same message: the first claim wins the number\'s last count, the other is refused', async () => {
		const { store } = clockedStore();
		const rules = { limits: { perMinute: 1, perHour: 5, perDay: 10 }, repeatWindowMinutes: 0 };
		const first = records(store, 'execution 1', rules);
		const second = records(store, 'execution 2', rules);
		expect(kinds(await first.reserve([send]))).toEqual(['send']);
		expect(kinds(await second.reserve([send]))).toEqual(['send']);
		expect(await first.claim(0)).toBe('go');
		expect(await second.claim(0)).toEqual({ limit: 'would be message 2 to 13900000001 in this calendar minute; this node allows 1' });
	});

	it('with Repeat Window 0, reservations a crashed run never started are taken over: a quick retry sends, counts included', async () => {
		const { store } = clockedStore();
		const rules = { limits: { perMinute: 1, perHour: 5, perDay: 10 }, repeatWindowMinutes: 0 };
		expect(kinds(await records(store, 'execution 1', rules).reserve([send]))).toEqual(['send']);
		// Execution 1's worker died: nothing was released. Its retry is a new execution.
		const retry = records(store, 'execution 2', rules);
		expect(kinds(await retry.reserve([send]))).toEqual(['send']);
		expect(await retry.claim(0)).toBe('go');
		await retry.markSent(new Map([[0, 'task-0']]));
		// One message counted in the minute: another is refused.
		expect(kinds(await records(store, 'execution 3', rules).reserve([{ ...send, message: 'other' }]))).toEqual(['limit']);
	});

	it('with Repeat Window 0, a send a crashed run started keeps its counts (it may have gone out)', async () => {
		const { store } = clockedStore();
		const rules = { limits: { perMinute: 1, perHour: 5, perDay: 10 }, repeatWindowMinutes: 0 };
		const crashed = records(store, 'execution 1', rules);
		await crashed.reserve([send]);
		expect(await crashed.claim(0)).toBe('go');
		expect(kinds(await records(store, 'execution 2', rules).reserve([send]))).toEqual(['limit']);
	});

	it('reservations a crashed run never started are taken over after its repeat window too: a late retry sends, counts included', async () => {
		const { clock, store } = clockedStore();
		const limits = { perMinute: 5, perHour: 5, perDay: 1 };
		expect(kinds(await records(store, 'execution 1', { limits }).reserve([send]))).toEqual(['send']);
		// The worker died; the execution is retried a quarter of an hour later, after the 10-minute window.
		clock.at += minutes(15);
		const retry = records(store, 'execution 2', { limits });
		expect(kinds(await retry.reserve([send]))).toEqual(['send']);
		expect(await retry.claim(0)).toBe('go');
		await retry.markSent(new Map([[0, 'task-0']]));
		// One message counted in the day; the retry's message guards the window from its send on.
		expect(kinds(await records(store, 'execution 3', { limits }).reserve([{ ...send, message: 'other' }]))).toEqual(['limit']);
		clock.at += minutes(9);
		expect(kinds(await records(store, 'execution 4', { limits }).reserve([send]))).toEqual(['repeat']);
	});

	it('a message sent again and again, each time after its window, keeps one record, not one holder per send', async () => {
		const { clock, store } = clockedStore();
		for (let round = 1; round <= 5; round++) {
			if (round > 1) clock.at += minutes(11);
			expect(kinds(await sendThrough(records(store, `execution ${round}`), [send]))).toEqual(['send']);
		}
		const [value] = await store.read([messageKeyOf('workflow|node', send.phone, send.message)]);
		expect(Object.keys(JSON.parse(value as string).holders)).toHaveLength(1);
	});

	it('a message two items of one run share stays recorded until both let go', async () => {
		const { store } = clockedStore();
		const nodeRun = records(store, 'execution 1');
		await nodeRun.reserve([send, { ...send, itemIndex: 1 }]);
		await nodeRun.claim(0);
		await nodeRun.claim(1);
		await nodeRun.release([0]);
		expect(kinds(await records(store, 'execution 2').reserve([send]))).toEqual(['repeat']);
		await nodeRun.release([1]);
		expect(kinds(await records(store, 'execution 3').reserve([send]))).toEqual(['send']);
	});

	it('a record of another shape is an error (nothing sent), naming the store, never a guess', async () => {
		const { store } = clockedStore();
		const messageKey = messageKeyOf('workflow|node', send.phone, send.message);
		await store.update([messageKey], () => ({ writes: [{ key: messageKey, value: '"OK"' }], result: undefined }));
		const failure = await records(store, 'execution 1').reserve([send]).catch((error: unknown) => error);
		expect(failure).toMatchObject({ name: 'RecordsFailure', store: "this n8n process's memory", reason: 'a send record (sms-message) is not an object', kept: { reserved: [], unknown: [] } });
	});
});

/** The memory store, listing the keys of each update, and failing the next `failing` updates as a refusing store does. */
class WatchedStore implements DurableStore {
	readonly kind = 'memory' as const;
	readonly label = 'the watched store';
	readonly updates: string[][] = [];
	failing = 0;

	constructor(private readonly inner: DurableStore) {}

	now() {
		return this.inner.now();
	}

	read(keys: readonly string[]) {
		return this.inner.read(keys);
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>, guess?: StoreGuess): Promise<T> {
		this.updates.push([...keys]);
		if (this.failing > 0 && this.failing--) throw new StoreUnavailable(this.label, 'the watched store refused the write (injected)');
		return await this.inner.update(keys, decide, guess);
	}
}

describe('claims asked together (the sends of a batch claim at once)', () => {
	const sendKey = (execution: string, itemIndex: number) => sendKeyOf('workflow|node', execution, 0, itemIndex);

	it('go to the store in one update, and each claim answers for its own item: go, taken over, or limit (a second update, with the counts, for the send that lost its message)', async () => {
		const { store: memory } = clockedStore();
		const store = new WatchedStore(memory);
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		const sends = [
			{ itemIndex: 0, phone: '13900000010', message: 'fresh' },
			{ itemIndex: 1, phone: '13900000011', message: 'taken over' },
			{ itemIndex: 2, phone: '13900000012', message: 'evicted' },
		];
		const slow = records(store, 'execution 1', { limits });
		expect(kinds(await slow.reserve(sends))).toEqual(['send', 'send', 'send']);
		// Another execution takes "taken over" and "evicted" over and starts "taken over"; it then lets "evicted" go, and a third fills its number's minute.
		const other = records(store, 'execution 2', { limits });
		expect(kinds(await other.reserve([sends[1], sends[2]].map((entry, itemIndex) => ({ ...entry, itemIndex }))))).toEqual(['send', 'send']);
		expect(await other.claim(0)).toBe('go');
		await other.release([1]);
		expect(kinds(await records(store, 'execution 3', { limits }).reserve([{ ...sends[2], message: 'another' }]))).toEqual(['send']);

		const before = store.updates.length;
		const answers = await Promise.all([slow.claim(0), slow.claim(1), slow.claim(2)]);
		expect(answers).toEqual(['go', 'taken', { limit: 'would be message 2 to 13900000012 in this calendar minute; this node allows 1' }]);
		const claimed = [0, 1, 2].map((itemIndex) => sendKey('execution 1', itemIndex));
		const updates = store.updates.slice(before);
		expect(updates.map((keys) => keys.filter((key) => key.startsWith('sms-send')))).toEqual([claimed, claimed]);
		expect(updates.map((keys) => keys.filter((key) => key.includes('>sms-count|')).length)).toEqual([0, 9]);
		expect(slow.holding()).toEqual([0]);
	});

	it('make one update, naming no counts, when every send still holds its message', async () => {
		const { store: memory } = clockedStore();
		const store = new WatchedStore(memory);
		const nodeRun = records(store, 'execution 1');
		await nodeRun.reserve([0, 1, 2, 3].map((itemIndex) => ({ itemIndex, phone: '13900000040', message: `m${itemIndex}` })));
		const before = store.updates.length;
		expect(await Promise.all([0, 1, 2, 3].map((itemIndex) => nodeRun.claim(itemIndex)))).toEqual(['go', 'go', 'go', 'go']);
		expect(store.updates.slice(before).map((keys) => keys.filter((key) => !key.includes('>sms-message|')))).toEqual([[0, 1, 2, 3].map((itemIndex) => sendKey('execution 1', itemIndex))]);
	});

	it('that fail release exactly their items, each naming only itself; an item claimed before keeps its record', async () => {
		const { store: memory } = clockedStore();
		const store = new WatchedStore(memory);
		const sends = [0, 1, 2].map((itemIndex) => ({ itemIndex, phone: `1390000002${itemIndex}`, message: `m${itemIndex}` }));
		const nodeRun = records(store, 'execution 1');
		await nodeRun.reserve(sends);
		expect(await nodeRun.claim(0)).toBe('go');
		// Every try of the joint claim fails; the release after it works.
		store.failing = 3;
		const before = store.updates.length;
		const outcomes = await Promise.allSettled([nodeRun.claim(1), nodeRun.claim(2)]);
		expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : outcome))).toEqual([
			expect.objectContaining({ name: 'RecordsFailure', reason: 'the watched store refused the write (injected)', kept: { reserved: [], unknown: [], notStarted: [] } }),
			expect.objectContaining({ name: 'RecordsFailure', kept: { reserved: [], unknown: [], notStarted: [] } }),
		]);
		// Three tries of one joint update, then one release of both.
		const touched = store.updates.slice(before).map((keys) => keys.filter((key) => key.startsWith('sms-send')));
		expect(touched).toEqual(Array(4).fill([sendKey('execution 1', 1), sendKey('execution 1', 2)]));
		const [first, second, third] = await store.read([0, 1, 2].map((itemIndex) => sendKey('execution 1', itemIndex)));
		expect([JSON.parse(first as string).state, second, third]).toEqual(['unknown', undefined, undefined]);
		expect(nodeRun.holding()).toEqual([0]);
		// The next execution sends the two released messages, and skips the one that may have gone out.
		expect(kinds(await records(store, 'execution 2').reserve(sends))).toEqual(['repeat', 'send', 'send']);
	});

	it('that fail, and whose release fails too, each name only their own item as kept', async () => {
		const { store: memory } = clockedStore();
		const store = new WatchedStore(memory);
		const sends = [0, 1].map((itemIndex) => ({ itemIndex, phone: `1390000003${itemIndex}`, message: `m${itemIndex}` }));
		const nodeRun = records(store, 'execution 1');
		await nodeRun.reserve(sends);
		store.failing = 6;
		const outcomes = await Promise.allSettled([nodeRun.claim(0), nodeRun.claim(1)]);
		expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason.kept : outcome))).toEqual([
			{ reserved: [0], unknown: [], notStarted: [] },
			{ reserved: [1], unknown: [], notStarted: [] },
		]);
		// This process owes their release: the end of the run takes them back once the store answers.
		expect(nodeRun.holding()).toEqual([]);
		await nodeRun.releaseUnstarted();
		expect(await store.read(sends.map(({ itemIndex }) => sendKey('execution 1', itemIndex)))).toEqual([undefined, undefined]);
	});

	it('whose connection is seen lost only on a later turn of the event loop: the claim was applied, its answer lost; the next try finds it done and goes (issue 44)', async () => {
		const { store: memory } = clockedStore();
		const store = new WatchedStore(memory);
		const nodeRun = records(store, 'execution 1');
		await nodeRun.reserve([{ itemIndex: 0, phone: '13900000050', message: 'm0' }]);
		let lost = false;
		let lossSeen = false;
		const update = store.update.bind(store);
		store.update = async (keys, decide, guess) => {
			if (!lost) {
				lost = true;
				await memory.update(keys, decide);
				setImmediate(() => (lossSeen = true));
				throw new StoreUnavailable(store.label, 'the connection was lost (injected)', { maybeWritten: true });
			}
			// Until the loss is seen, every call fails at once, as on a socket no longer writable.
			if (!lossSeen) throw new StoreUnavailable(store.label, "the stream isn't writeable (injected)", { maybeWritten: true });
			return await update(keys, decide, guess);
		};
		expect(await nodeRun.claim(0)).toBe('go');
	});

	it('whose answer is lost after the store applied them, and whose release fails too, say no message went out; the next reserve in this process takes them back and sends them (issue 44)', async () => {
		const { store: memory } = clockedStore();
		const store = new WatchedStore(memory);
		const sends = [0, 1].map((itemIndex) => ({ itemIndex, phone: `1390000004${itemIndex}`, message: `m${itemIndex}` }));
		const nodeRun = records(store, 'execution 1');
		await nodeRun.reserve(sends);
		// The joint claim is applied, its answer lost; every later update fails before writing.
		let calls = 0;
		const update = store.update.bind(store);
		store.update = async (keys, decide, guess) => {
			if (calls++ === 0) {
				await memory.update(keys, decide);
				throw new StoreUnavailable(store.label, 'the connection was lost (injected)', { maybeWritten: true });
			}
			if (calls <= 6) throw new StoreUnavailable(store.label, 'the connection was lost (injected)');
			return await update(keys, decide, guess);
		};
		const outcomes = await Promise.allSettled([nodeRun.claim(0), nodeRun.claim(1)]);
		expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason.kept : outcome))).toEqual([
			{ reserved: [], unknown: [], notStarted: [0] },
			{ reserved: [], unknown: [], notStarted: [1] },
		]);
		const [first] = await store.read([sendKey('execution 1', 0)]);
		expect(JSON.parse(first as string).state).toBe('unknown');
		// Another execution in this process: what is owed is taken back first, so it sends both.
		expect(kinds(await records(store, 'execution 2').reserve(sends))).toEqual(['send', 'send']);
	});
});

describe("a claim's gate (issue 41: what must not leave, decided as the message leaves)", () => {
	const gate = (key: string) => ({ keys: [key], stop: (value: (key: string) => string | undefined, now: number) => (value(key) !== undefined ? `stopped at ${now}` : undefined) });

	it('reads its keys in the claim\'s own update, at the store\'s time: stopped, nothing is written, and the reservation is given back at the end', async () => {
		const { clock, store } = clockedStore();
		const nodeRun = records(store, 'execution 1', { limits: { perMinute: 1, perHour: 5, perDay: 10 } });
		expect(kinds(await nodeRun.reserve([send]))).toEqual(['send']);
		await store.update(['opt-out|account|13900000001'], () => ({ writes: [{ key: 'opt-out|account|13900000001', value: String(T0) }], result: undefined }));
		clock.at += 1234;
		expect(await nodeRun.claim(0, gate('opt-out|account|13900000001'))).toEqual({ stopped: `stopped at ${T0 + 1234}` });
		// Still only reserved (not started): the end of the run gives it back with its count.
		expect(nodeRun.holding()).toEqual([0]);
		const [record] = await store.read([sendKeyOf('workflow|node', 'execution 1', 0, 0)]);
		expect(JSON.parse(String(record)).state).toBe('reserved');
		await nodeRun.releaseUnstarted();
		expect(nodeRun.holding()).toEqual([]);
		expect(kinds(await records(store, 'execution 2', { limits: { perMinute: 1, perHour: 5, perDay: 10 } }).reserve([send]))).toEqual(['send']);
	});

	it('lets the claim go on when it does not stop it', async () => {
		const { store } = clockedStore();
		const nodeRun = records(store, 'execution 1');
		await nodeRun.reserve([send]);
		expect(await nodeRun.claim(0, gate('opt-out|account|13900000001'))).toBe('go');
	});
});
