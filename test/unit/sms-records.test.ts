import type { IExecuteFunctions } from 'n8n-workflow';

import { DatabaseRecordStore } from '../../nodes/shared/store/sendRecords/databaseStore';
import { SmsSendRecords, type SmsLimits } from '../../nodes/shared/store/sendRecords/rules';
import { nodeRecords, type NodeRecords } from '../../nodes/shared/store/nodeRecords';
import { forgetSeenSlots } from '../../nodes/shared/testing';

/** The node's records as n8n keeps them: plain values, no times. */
function memoryRecords(): NodeRecords & { values: Set<string> } {
	const values = new Set<string>();
	return {
		values,
		acrossRestarts: true,
		checkAndRecord: async (asked) => {
			const before = new Set(asked.filter((value) => values.has(value)));
			for (const value of asked) values.add(value);
			return { before };
		},
		remove: async (removed) => {
			for (const value of removed) values.delete(value);
		},
	};
}

beforeEach(() => forgetSeenSlots());

/** The records of one node run over n8n's store, as store/sendRecords/open.ts opens them without Redis. */
function guard(records: NodeRecords, executionId: string, limits: SmsLimits | undefined, windowMinutes: number, scope = 'workflow|node') {
	return new SmsSendRecords(new DatabaseRecordStore(records, scope, executionId, limits, windowMinutes));
}

const LIMITS = { perMinute: 100, perHour: 100, perDay: 100 };
const send = { itemIndex: 0, phone: '13900000001', message: 'same message' };
const minutes = (n: number) => n * 60_000;
const T0 = Date.parse('2026-11-22T02:00:00.000Z');

describe('repeat window (10 buckets of a tenth of the window)', () => {
	async function decisionAfter(elapsedMs: number, sentAt = T0) {
		const records = memoryRecords();
		await guard(records, 'execution 1', LIMITS, 10).reserve([send], sentAt);
		return (await guard(records, 'execution 2', LIMITS, 10).reserve([send], sentAt + elapsedMs)).get(0)?.kind;
	}

	it.each([0, 1, 5, 8, 9])('another execution %i minutes later is a repeat (within 90% of the window, always)', async (elapsed) => {
		expect(await decisionAfter(minutes(elapsed))).toBe('repeat');
		expect(await decisionAfter(minutes(elapsed), T0 + 59_999)).toBe('repeat');
	});

	it.each([10, 11, 60])('another execution %i minutes later sends', async (elapsed) => {
		expect(await decisionAfter(minutes(elapsed))).toBe('send');
		expect(await decisionAfter(minutes(elapsed), T0 + 59_999)).toBe('send');
	});

	it('the same execution (a loop\'s next run) sends the same message again', async () => {
		const records = memoryRecords();
		await guard(records, 'execution 1', LIMITS, 10).reserve([send], T0);
		expect((await guard(records, 'execution 1', LIMITS, 10).reserve([send], T0 + 1000)).get(0)?.kind).toBe('send');
	});

	it('a window of 0 records no message at all', async () => {
		const records = memoryRecords();
		await guard(records, 'execution 1', LIMITS, 0).reserve([send], T0);
		expect([...records.values].some((value) => value.startsWith('sms-repeat'))).toBe(false);
	});
});

describe('per-number limits (fixed calendar windows)', () => {
	it('items of one run take slots in item order; the one over the limit is refused and takes none', async () => {
		const records = memoryRecords();
		const nodeRun = guard(records, 'execution 1', { perMinute: 2, perHour: 5, perDay: 10 }, 0);
		const decisions = await nodeRun.reserve([0, 1, 2].map((itemIndex) => ({ itemIndex, phone: '13900000002', message: `m${itemIndex}` })), T0);
		expect([...decisions.values()].map((decision) => decision.kind)).toEqual(['send', 'send', 'limit']);
		// Two sends, three slots each (minute, hour, day); nothing else stays recorded.
		expect(records.values.size).toBe(6);
	});

	it('releasing a send that certainly failed frees its slots', async () => {
		const records = memoryRecords();
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		const nodeRun = guard(records, 'execution 1', limits, 10);
		await nodeRun.reserve([send], T0);
		await nodeRun.release([0]);
		expect(records.values.size).toBe(0);
		expect((await guard(records, 'execution 2', limits, 10).reserve([send], T0)).get(0)?.kind).toBe('send');
	});
});

describe('database store: what each send keeps, and what two runs at once get', () => {
	/** The store, counting n8n calls (each reads and writes the node's whole row). */
	function countingRecords() {
		const records = memoryRecords();
		const calls = { check: 0, remove: 0 };
		return {
			records,
			calls,
			store: {
				...records,
				checkAndRecord: async (asked: string[]) => (calls.check++, await records.checkAndRecord(asked)),
				remove: async (removed: string[]) => (calls.remove++, await records.remove(removed)),
			} as NodeRecords,
		};
	}
	const batch = (count: number, message = (index: number) => `m${index}`) =>
		Array.from({ length: count }, (_, itemIndex) => ({ itemIndex, phone: `1390000${String(itemIndex).padStart(4, '0')}`, message: message(itemIndex) }));

	it('a run of sends asks n8n once and removes nothing; each send keeps its 10 buckets, marker and 3 slots', async () => {
		const { records, calls, store } = countingRecords();
		const decisions = await guard(store, 'execution 1', LIMITS, 10).reserve(batch(50), T0);
		expect([...decisions.values()].every((decision) => decision.kind === 'send')).toBe(true);
		expect(calls).toEqual({ check: 1, remove: 0 });
		expect(records.values.size).toBe(50 * 14);
	});

	it('a repeat keeps nothing new, and its slot goes to the next item to the same number', async () => {
		const { records, store } = countingRecords();
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		await guard(store, 'execution 1', limits, 0).reserve([{ itemIndex: 0, phone: '13900000009', message: 'other' }], T0 - minutes(5));
		await guard(store, 'execution 1', limits, 10).reserve([{ itemIndex: 0, phone: '13900000009', message: 'first' }], T0 - minutes(2));
		const before = new Set(records.values);
		const decisions = await guard(store, 'execution 2', limits, 10).reserve(
			[
				{ itemIndex: 0, phone: '13900000009', message: 'first' },
				{ itemIndex: 1, phone: '13900000009', message: 'second' },
			],
			T0,
		);
		expect([...decisions.values()].map((decision) => decision.kind)).toEqual(['repeat', 'send']);
		const added = [...records.values].filter((value) => !before.has(value));
		expect(added.filter((value) => value.startsWith('sms-slot'))).toHaveLength(3);
		expect(added.filter((value) => value.includes('|first|') || value.endsWith('|first'))).toHaveLength(0);
	});

	it('after a restart (counts unknown to the process) a send finds the next free slot', async () => {
		const { store } = countingRecords();
		const limits = { perMinute: 5, perHour: 3, perDay: 10 };
		const one = { itemIndex: 0, phone: '13900000010' };
		for (const [index, at] of [0, 1, 2].map((n) => [n, T0 + minutes(n)])) {
			expect((await guard(store, `execution ${index}`, limits, 0).reserve([{ ...one, message: `m${index}` }], at)).get(0)?.kind).toBe('send');
		}
		forgetSeenSlots();
		const refused = (await guard(store, 'execution 9', limits, 0).reserve([{ ...one, message: 'm9' }], T0 + minutes(3))).get(0);
		expect(refused).toEqual({ kind: 'limit', problem: 'would be message 4 to 13900000010 in this calendar hour; this node allows 3' });
	});

	it('two executions deciding the same batch at once in one process: each message is sent once, counts equal sends', async () => {
		const { records, store } = countingRecords();
		const limits = { perMinute: 2, perHour: 5, perDay: 10 };
		const [first, second] = await Promise.all([
			guard(store, 'execution A', limits, 10).reserve(batch(5), T0),
			guard(store, 'execution B', limits, 10).reserve(batch(5), T0),
		]);
		const kinds = [...first.values(), ...second.values()].map((decision) => decision.kind);
		expect(kinds.filter((kind) => kind === 'send')).toHaveLength(5);
		expect(kinds.filter((kind) => kind === 'repeat')).toHaveLength(5);
		expect([...records.values].filter((value) => value.startsWith('sms-slot'))).toHaveLength(5 * 3);
		// The minute allows 2: a different message to the same numbers still goes.
		const next = await guard(store, 'execution C', limits, 10).reserve(batch(5, (index) => `other ${index}`), T0 + 1000);
		expect([...next.values()].every((decision) => decision.kind === 'send')).toBe(true);
	});
});

describe('node records without n8n\'s store', () => {
	it('fall back to this process\'s memory and say so', async () => {
		const ctx = {
			helpers: {},
			getWorkflow: () => ({ id: 'w' }),
			getNode: () => ({ id: 'n', name: 'SMS' }),
		} as unknown as IExecuteFunctions;
		const records = nodeRecords(ctx);
		expect(records.acrossRestarts).toBe(false);
		expect((await records.checkAndRecord(['a'])).before.size).toBe(0);
		expect((await nodeRecords(ctx).checkAndRecord(['a'])).before.has('a')).toBe(true);
	});
});
