/**
 * The spending cap and budgets as a node uses them (money/spend.ts's SpendMeter) over the ledger in a
 * memory store: what is counted, what is refused and with which words, what is given back. The
 * ledger itself on every store: test/store/ledger.test.ts; whole nodes: test/outcomes/budget.test.ts
 * and spendingCap.test.ts.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { SpendLedger, type MoneyLimits } from '../../nodes/shared/money/ledger';
import { attemptPrice, describeCalls, priceOf, roundYuan, SpendMeter } from '../../nodes/shared/money/spend';
import type { DurableStore, StoreDecision } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { plainScope } from '../../nodes/shared/store/guardScope';

const GUARD = { scope: 'account', legacy: 'legacy-account' };

const NODE = { id: 'n1', name: 'Vehicle', type: 'dataGatewayVehicle', typeVersion: 1, position: [0, 0] as [number, number], parameters: {} };
const ctxOf = (execution: string | undefined) => ({ getNode: () => NODE, getExecutionId: () => execution }) as unknown as IExecuteFunctions;
const limitsOf = (capYuan = 0, dailyYuan = 0, monthlyYuan = 0): MoneyLimits => ({ capYuan, dailyYuan, monthlyYuan });

/** 11:00 China time, 26 November 2026. */
let clock = Date.UTC(2026, 10, 26, 3);
let store: MemoryStore;
let opened = 0;
/** A memory store standing for one that outlives n8n: process memory itself may not count budgets (issue 41). */
function outlivingStore(clockOf: () => number): MemoryStore {
	const held = new MemoryStore(clockOf);
	Object.defineProperty(held, 'kind', { value: 'sqlite' });
	return held;
}
beforeEach(() => {
	clock = Date.UTC(2026, 10, 26, 3);
	store = outlivingStore(() => clock);
	opened = 0;
});

/** `execution` null: a run whose context has no execution ID. */
function meterOf(limits: MoneyLimits, execution: string | null = 'e1', open: () => Promise<DurableStore> = async () => store) {
	return new SpendMeter(ctxOf(execution ?? undefined), GUARD, limits, async () => {
		opened++;
		return await open();
	});
}

/** What the ledger counts now for the execution, today and this month, in yuan. */
async function counted(execution = 'e1') {
	const { spent } = await new SpendLedger(plainScope(store, "account"), execution, limitsOf()).spent();
	return { execution: spent.execution / 10_000, day: spent.day / 10_000, month: spent.month / 10_000 };
}

const failing = async (): Promise<DurableStore> => {
	throw new Error('Redis at 10.0.0.9:6379 refused the connection');
};

/** Lets a give-back the meter started without waiting for it (a reserve of another day) finish. */
const settled = async () => await new Promise((resolve) => setImmediate(resolve));

describe('in process memory', () => {
	it('a daily or monthly budget is refused naming the fix, nothing counted; a cap alone (one execution) is counted', async () => {
		const memory = new MemoryStore(() => clock);
		for (const limits of [limitsOf(0, 5), limitsOf(0, 0, 5)]) {
			const meter = meterOf(limits, 'e1', async () => memory);
			expect(await meter.reserveAttempt('vehicleDetail')).toEqual({
				refusal: expect.stringMatching(/budgets are counted only where the count outlives n8n, and this n8n has only this n8n process's memory: set "Shared Redis URL for Limits and Send Records" in the credential, or run n8n on Node 22\.13 or later/),
				hint: expect.any(String),
			});
		}
		expect(memory.size).toBe(0);
		expect(await meterOf(limitsOf(2), 'e1', async () => memory).reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
	});
});

describe('prices', () => {
	it('an SMS costs per segment, counted by the send itself; free operations cost nothing', () => {
		expect(priceOf('vehicleDetail')).toBe(1.2);
		expect(priceOf('smsSend')).toBe(0.035);
		expect(priceOf('violationSupport')).toBe(0);
		expect(attemptPrice('smsSend')).toBe(0);
		expect(attemptPrice('enterpriseDetail')).toBe(0.35);
		expect(roundYuan(0.1 + 0.2)).toBe(0.3);
		expect(describeCalls(3, 'vehicleDetail')).toBe('3 × Get Vehicle Detail at 1.2 yuan');
	});
});

describe('without a cap or budget', () => {
	it('nothing is counted, refused or even opened, whatever the store', async () => {
		const meter = meterOf(limitsOf(), 'e1', failing);
		expect(meter.limited).toBe(false);
		expect(meter.capYuan).toBe(0);
		expect(await meter.reserveEstimate(100, '1 plate')).toBeUndefined();
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 0 });
		await meter.checkNextCall(0.2, '1 page');
		await meter.spend(5);
		expect(await meter.settle()).toBeUndefined();
		expect(opened).toBe(0);
	});

	it.each([
		['a cap', limitsOf(5)],
		['a daily budget', limitsOf(0, 5)],
		['a monthly budget', limitsOf(0, 0, 5)],
	])('%s alone makes every paid attempt counted', async (_label, limits) => {
		const meter = meterOf(limits);
		expect(meter.limited).toBe(true);
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await counted()).toEqual({ execution: 1.2, day: 1.2, month: 1.2 });
	});
});

describe('an estimate before the first paid call', () => {
	it('of exactly the cap is reserved, and the calls it counted are made without passing the cap', async () => {
		const meter = meterOf(limitsOf(2.4));
		expect(meter.capYuan).toBe(2.4);
		expect(await meter.reserveEstimate(2.4, '2 plates')).toBeUndefined();
		expect(await counted()).toEqual({ execution: 2.4, day: 2.4, month: 2.4 });
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		// Taken from the reserve: counted once.
		expect((await counted()).execution).toBe(2.4);
		expect(await meter.reserveAttempt('vehicleDetail')).toEqual({
			refusal: "Spending cap: 1.2 yuan more would bring this execution's spend with this credential to 3.6 yuan, above the cap of 2.4 yuan",
			hint: 'Raise "Max Spend per Execution (Yuan)" in the credential, or give the node fewer items.',
		});
		expect((await counted()).execution).toBe(2.4);
	});

	it('above the cap stops the node before any call, counting nothing', async () => {
		const meter = meterOf(limitsOf(2));
		const error = await meter.reserveEstimate(2.4, '2 plates');
		expect(error?.message).toBe(
			"Spending cap: this node's paid calls are estimated at 2.4 yuan (2 plates); with 0 yuan already spent in this execution with this credential that is 2.4 yuan, above the cap of 2 yuan",
		);
		expect(error?.description).toBe('No paid call was made by this node. Raise "Max Spend per Execution (Yuan)" in the credential, or give the node fewer items.');
		await expect(meter.checkEstimate(2.4, '2 plates')).rejects.toThrow('Spending cap: this node');
		expect(await counted()).toEqual({ execution: 0, day: 0, month: 0 });
	});

	it('of nothing counts nothing and opens no store', async () => {
		const meter = meterOf(limitsOf(2), 'e1', failing);
		expect(await meter.reserveEstimate(0, 'no item')).toBeUndefined();
		await meter.checkEstimate(-1, 'no item');
		expect(opened).toBe(0);
	});

	it('above a budget leaves each call to reserve its own price, so that what fits is still made', async () => {
		const meter = meterOf(limitsOf(0, 2));
		expect(await meter.reserveEstimate(3.6, '3 plates')).toBeUndefined();
		expect(await counted()).toEqual({ execution: 0, day: 0, month: 0 });
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		const refused = await meter.reserveAttempt('vehicleDetail');
		expect(refused).toEqual({
			refusal:
				"Daily budget: 1.2 yuan more would bring the spend of this credential's account today (China time) to 2.40 yuan, above its daily budget of 2.00 yuan (1.20 yuan spent; it resets at 2026-11-27T00:00:00+08:00)",
			hint: 'Raise "Daily Budget (Yuan)" in the credential, or run it again once the budget resets.',
		});
		expect(await counted()).toEqual({ execution: 1.2, day: 1.2, month: 1.2 });
	});

	it('above a budget, when the node must be paid for whole, stops it', async () => {
		const meter = meterOf(limitsOf(0, 0, 2));
		const error = await meter.reserveEstimate(3.6, '3 plates', { whole: true });
		expect(error?.message).toBe(
			"Monthly budget: this node's paid calls are estimated at 3.6 yuan (3 plates); with 0.00 yuan already spent this month (China time) by this credential's account that is 3.60 yuan, above its monthly budget of 2.00 yuan; it resets at 2026-12-01T00:00:00+08:00",
		);
		expect(error?.description).toBe('No paid call was made by this node. Raise "Monthly Budget (Yuan)" in the credential, or run it again once the budget resets.');
		expect(await counted()).toEqual({ execution: 0, day: 0, month: 0 });
	});

	it('with the store failing stops the node: without the store nothing can be counted', async () => {
		const meter = meterOf(limitsOf(5), 'e1', failing);
		const error = await meter.reserveEstimate(1.2, '1 plate');
		expect(error?.message).toBe('Not sent: the spending cap and budgets could not be counted: Redis at 10.0.0.9:6379 refused the connection');
		expect(error?.description).toBe(
			'No paid call was made by this node: without the store its spend cannot be counted. Fix the store named, or set the cap and budgets of the credential to 0.',
		);
	});
});

describe('one attempt of a call', () => {
	it('of a free operation is never counted', async () => {
		const meter = meterOf(limitsOf(1), 'e1', failing);
		expect(await meter.reserveAttempt('violationSupport')).toMatchObject({ yuan: 0 });
		expect(await meter.reserveAttempt('smsSend')).toMatchObject({ yuan: 0 });
		expect(opened).toBe(0);
	});

	it('that the gateway certainly did not bill is given back: to the store, or to the reserve it came from', async () => {
		const meter = meterOf(limitsOf(1.2));
		const attempt = await meter.reserveAttempt('vehicleDetail');
		expect((await counted()).execution).toBe(1.2);
		if (attempt.refusal !== undefined) throw new Error(attempt.refusal);
		await attempt.giveBack();
		expect((await counted()).execution).toBe(0);

		expect(await meter.reserveEstimate(1.2, '1 plate')).toBeUndefined();
		const fromReserve = await meter.reserveAttempt('vehicleDetail');
		if (fromReserve.refusal !== undefined) throw new Error(fromReserve.refusal);
		await fromReserve.giveBack();
		// Back in the reserve: the retry fits the cap again, and the node's end gives it back.
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect((await counted()).execution).toBe(1.2);
	});

	it('with the store failing is refused, with the fix', async () => {
		const meter = meterOf(limitsOf(5), 'e1', failing);
		expect(await meter.reserveAttempt('vehicleDetail')).toEqual({
			refusal: 'the spending cap and budgets could not be counted: Redis at 10.0.0.9:6379 refused the connection',
			hint: 'Fix the store named, or set the cap and budgets of the credential to 0.',
		});
	});
});

describe('a listing that counts its pages as they come', () => {
	it('reserves each page, counts it once when its call is made, and stops at the cap saying what it did', async () => {
		const meter = meterOf(limitsOf(0.5));
		await meter.checkNextCall(0.2, '0 pages');
		expect(await meter.reserveAttempt('enterpriseCopyright')).toMatchObject({ yuan: 0.2 });
		await meter.checkNextCall(0.2, '1 page');
		expect(await meter.reserveAttempt('enterpriseCopyright')).toMatchObject({ yuan: 0.2 });
		expect((await counted()).execution).toBe(0.4);
		const refused = meter.checkNextCall(0.2, '2 pages');
		await expect(refused).rejects.toThrow(
			"Spending cap: the next paid call (0.2 yuan) would bring this execution's spend with this credential to 0.6 yuan, above the cap of 0.5 yuan; stopped after 2 pages",
		);
		await expect(refused).rejects.toMatchObject({ description: 'Raise "Max Spend per Execution (Yuan)" in the credential, or use a Limit instead of Return All.' });
	});

	it('reserves nothing more while the reserve holds the page', async () => {
		const meter = meterOf(limitsOf(0.2));
		expect(await meter.reserveEstimate(0.2, '1 page')).toBeUndefined();
		await meter.checkNextCall(0.2, '0 pages');
		expect((await counted()).execution).toBe(0.2);
	});

	it('stops when the store fails', async () => {
		const meter = meterOf(limitsOf(5), 'e1', failing);
		const refused = meter.checkNextCall(0.2, '3 pages');
		await expect(refused).rejects.toThrow('Not sent: the spending cap and budgets could not be counted: Redis at 10.0.0.9:6379 refused the connection; stopped after 3 pages');
		await expect(refused).rejects.toMatchObject({ description: 'Fix the store named, or set the cap and budgets of the credential to 0.' });
	});
});

describe('an SMS that went out (or may have)', () => {
	it('is taken from the reserve, else counted at once even beyond the cap: it may be billed', async () => {
		const meter = meterOf(limitsOf(0.035));
		expect(await meter.reserveEstimate(0.035, '1 SMS')).toBeUndefined();
		await meter.spend(0.035);
		expect((await counted()).execution).toBe(0.035);
		await meter.spend(0.035);
		expect((await counted()).execution).toBe(0.07);
		await meter.spend(0);
		expect((await counted()).execution).toBe(0.07);
	});

	it('is counted in the store when the reserve holds less than it', async () => {
		const meter = meterOf(limitsOf(1));
		expect(await meter.reserveEstimate(0.035, '1 SMS')).toBeUndefined();
		await meter.spend(0.07);
		expect(await meter.settle()).toBeUndefined();
		// The reserve given back at the end, the two segments counted.
		expect((await counted()).execution).toBe(0.07);
	});

	it('never fails the send when the store does', async () => {
		const meter = meterOf(limitsOf(1), 'e1', failing);
		await expect(meter.spend(0.035)).resolves.toBeUndefined();
	});
});

describe("the node's end", () => {
	it("gives back what its reserve did not spend, and tells the budgets' line", async () => {
		const meter = meterOf(limitsOf(10, 50, 500));
		expect(await meter.reserveEstimate(3.6, '3 plates')).toBeUndefined();
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await meter.settle()).toBe('Budget: 1.20 of 50.00 yuan today; 1.20 of 500.00 yuan this month (China time)');
		expect(await counted()).toEqual({ execution: 1.2, day: 1.2, month: 1.2 });
		// Settled once: a second end gives back nothing more.
		await meter.settle();
		expect(await counted()).toEqual({ execution: 1.2, day: 1.2, month: 1.2 });
	});

	it('of a node with a budget that paid for nothing has no line, and leaves the ledger as it was', async () => {
		const meter = meterOf(limitsOf(0, 50));
		expect(await meter.reserveAttempt('violationSupport')).toMatchObject({ yuan: 0 });
		expect(await meter.settle()).toBeUndefined();
		expect(opened).toBe(0);
	});

	it('gives back two estimates of one day whole, each counted when taken', async () => {
		const meter = meterOf(limitsOf(10, 50));
		expect(await meter.reserveEstimate(2.4, '2 plates')).toBeUndefined();
		expect(await meter.reserveEstimate(1.2, '1 plate')).toBeUndefined();
		await settled();
		expect(await counted()).toEqual({ execution: 3.6, day: 3.6, month: 3.6 });
		expect(await meter.settle()).toBe('Budget: 0.00 of 50.00 yuan today (China time)');
		expect(await counted()).toEqual({ execution: 0, day: 0, month: 0 });
	});

	it('keeps a reserve it could not give back counted (the safe side), without failing the node', async () => {
		const flaky = new (class extends MemoryStore {
			failUpdates = false;
			override async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>): Promise<T> {
				if (this.failUpdates) throw new Error('connection lost');
				return await super.update(keys, decide);
			}
		})(() => clock);
		store = flaky;
		const meter = meterOf(limitsOf(10));
		expect(await meter.reserveEstimate(2.4, '2 plates')).toBeUndefined();
		flaky.failUpdates = true;
		await expect(meter.settle()).resolves.toBeUndefined();
		flaky.failUpdates = false;
		expect((await counted()).execution).toBe(2.4);
	});

	it('of a node whose reserve was all spent asks the store nothing more (round trips are few)', async () => {
		let updates = 0;
		const counting = new (class extends MemoryStore {
			override async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>): Promise<T> {
				updates++;
				return await super.update(keys, decide);
			}
		})(() => clock);
		const meter = meterOf(limitsOf(10), 'e1', async () => counting);
		expect(await meter.reserveEstimate(1.2, '1 plate')).toBeUndefined();
		const afterEstimate = updates;
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		await meter.settle();
		expect(updates).toBe(afterEstimate);
	});

	it('with a budget line only when a budget is set', async () => {
		const meter = meterOf(limitsOf(10));
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await meter.settle()).toBeUndefined();
	});
});

describe('where the spend is counted', () => {
	it("per execution: a node resumed after a Wait (another meter) counts on its execution's spend; another execution starts at 0", async () => {
		const before = meterOf(limitsOf(2));
		expect(await before.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		const afterWait = meterOf(limitsOf(2));
		expect(await afterWait.reserveAttempt('vehicleDetail')).toMatchObject({ refusal: expect.stringContaining('to 2.4 yuan, above the cap of 2 yuan') });
		expect(await meterOf(limitsOf(2), 'e2').reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
	});

	it('a run without an execution ID counts its own spend against the cap, apart from every other', async () => {
		const meter = meterOf(limitsOf(2), null);
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ refusal: expect.stringContaining('to 2.4 yuan, above the cap of 2 yuan') });
		expect(await meterOf(limitsOf(2), null).reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect((await counted()).day).toBe(2.4);
		// A context without getExecutionId at all (an older n8n) counts the same way.
		const older = new SpendMeter({ getNode: () => NODE } as unknown as IExecuteFunctions, GUARD, limitsOf(2), async () => store);
		expect(await older.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await older.reserveAttempt('vehicleDetail')).toMatchObject({ refusal: expect.stringContaining('above the cap of 2 yuan') });
	});

	it('a reserve taken on another China day gives the earlier day back its unspent reserve, and counts the new day afresh', async () => {
		clock = Date.UTC(2026, 10, 26, 15, 59); // 23:59 China time
		const meter = meterOf(limitsOf(0, 50));
		expect(await meter.reserveEstimate(2.4, '2 plates')).toBeUndefined();
		clock = Date.UTC(2026, 10, 26, 16, 1); // 00:01 the next day
		expect(await meter.reserveEstimate(1.2, '1 plate')).toBeUndefined();
		await settled();
		const days = async () => {
			const ledger = new SpendLedger(plainScope(store, "account"), 'e1', limitsOf());
			const today = (await ledger.spent()).spent.day / 10_000;
			clock -= 2 * 60_000;
			const yesterday = (await ledger.spent()).spent.day / 10_000;
			clock += 2 * 60_000;
			return { yesterday, today };
		};
		expect(await days()).toEqual({ yesterday: 0, today: 1.2 });
		// The new day's reserve holds one call: the second is counted anew.
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await meter.reserveAttempt('vehicleDetail')).toMatchObject({ yuan: 1.2 });
		expect(await days()).toEqual({ yesterday: 0, today: 2.4 });
	});
});
