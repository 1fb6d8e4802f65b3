import type { IExecuteFunctions } from 'n8n-workflow';

import { SmsSendRecords } from '../../nodes/shared/smsGuard';
import { nodeRecords, type NodeRecords } from '../../nodes/shared/state';

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

const LIMITS = { perMinute: 100, perHour: 100, perDay: 100 };
const send = { itemIndex: 0, phone: '13900000001', message: 'same message' };
const minutes = (n: number) => n * 60_000;
const T0 = Date.parse('2026-11-22T02:00:00.000Z');

describe('repeat window (10 buckets of a tenth of the window)', () => {
	async function decisionAfter(elapsedMs: number, sentAt = T0) {
		const records = memoryRecords();
		await new SmsSendRecords(records, 'execution 1', LIMITS, 10).reserve([send], sentAt);
		return (await new SmsSendRecords(records, 'execution 2', LIMITS, 10).reserve([send], sentAt + elapsedMs)).get(0)?.kind;
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
		await new SmsSendRecords(records, 'execution 1', LIMITS, 10).reserve([send], T0);
		expect((await new SmsSendRecords(records, 'execution 1', LIMITS, 10).reserve([send], T0 + 1000)).get(0)?.kind).toBe('send');
	});

	it('a window of 0 records no message at all', async () => {
		const records = memoryRecords();
		await new SmsSendRecords(records, 'execution 1', LIMITS, 0).reserve([send], T0);
		expect([...records.values].some((value) => value.startsWith('sms-repeat'))).toBe(false);
	});
});

describe('per-number limits (fixed calendar windows)', () => {
	it('items of one run take slots in item order; the one over the limit is refused and takes none', async () => {
		const records = memoryRecords();
		const guard = new SmsSendRecords(records, 'execution 1', { perMinute: 2, perHour: 5, perDay: 10 }, 0);
		const decisions = await guard.reserve([0, 1, 2].map((itemIndex) => ({ itemIndex, phone: '13900000002', message: `m${itemIndex}` })), T0);
		expect([...decisions.values()].map((decision) => decision.kind)).toEqual(['send', 'send', 'limit']);
		// Two sends, three slots each (minute, hour, day); nothing else stays recorded.
		expect(records.values.size).toBe(6);
	});

	it('releasing a send that certainly failed frees its slots', async () => {
		const records = memoryRecords();
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		const guard = new SmsSendRecords(records, 'execution 1', limits, 10);
		await guard.reserve([send], T0);
		await guard.release([0]);
		expect(records.values.size).toBe(0);
		expect((await new SmsSendRecords(records, 'execution 2', limits, 10).reserve([send], T0)).get(0)?.kind).toBe('send');
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
