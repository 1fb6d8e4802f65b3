/**
 * The money ledger's own steps (nodes/shared/money/ledger.ts) on process memory: the China day named
 * from the clock offset it learned, named again when the store's day differs and given up when it
 * keeps changing, nothing written for nothing to count, each key's lifetime, and what `spent` adds
 * up from the account's former scopes. The ledger on every store: test/store/ledger.test.ts.
 */
import { LEDGER_KEEP_MS, SpendLedger, toUnits } from '../../nodes/shared/money/ledger';
import { plainScope } from '../../nodes/shared/store/guardScope';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { recordUpdates } from '../harness/recordedUpdates';

const noLimits = { capYuan: 0, dailyYuan: 0, monthlyYuan: 0 };
const DAY_MS = 24 * 3_600_000;

/** A memory store on its own clock, recording each update's writes. */
function recordingStore(clock: () => number) {
	const store = new MemoryStore(clock);
	return { store, ...recordUpdates(store) };
}

describe('the ledger', () => {
	it("names the store's day once it has learned the store's clock: one update per reservation after the first", async () => {
		// The store's clock three days behind this host's (a Redis elsewhere keeps its own).
		const at = Date.now() - 3 * DAY_MS;
		const { store, updates } = recordingStore(() => at);
		const ledger = new SpendLedger(plainScope(store, 'account'), 'execution', noLimits);
		expect(ledger.storeLabel).toBe(store.label);
		await ledger.reserve(toUnits(0.1));
		expect(updates()).toBe(2);
		await ledger.reserve(toUnits(0.1));
		expect(updates()).toBe(3);
		expect((await ledger.spent()).spent).toEqual({ execution: 2000, day: 2000, month: 2000 });
	});

	it('gives up, having written nothing, when the store says another day at each of three tries', async () => {
		let day = 0;
		const { store, updates } = recordingStore(() => Date.UTC(2026, 10, 1, 3) + day++ * DAY_MS);
		const ledger = new SpendLedger(plainScope(store, 'account'), 'execution', noLimits);
		await expect(ledger.reserve(toUnits(0.1))).rejects.toThrow("The store's China day kept changing while the spend was counted (now 2026-11-03T11:00:00+08:00)");
		expect(updates()).toBe(3);
		expect(store.size).toBe(0);
	});

	it('writes each count with its lifetime, and nothing for nothing to count or give back', async () => {
		const { store, writes } = recordingStore(() => Date.UTC(2026, 10, 26, 3));
		const ledger = new SpendLedger(plainScope(store, 'account'), 'execution', noLimits);
		const reserved = await ledger.reserve(0);
		expect(writes.pop()).toEqual([]);
		if (!reserved.ok) throw new Error('a reservation of 0 is never refused');
		await ledger.reserve(toUnits(0.5));
		expect(writes.pop()?.map(({ value, ttlMs }) => [value, ttlMs])).toEqual([
			['5000', LEDGER_KEEP_MS.execution],
			['5000', LEDGER_KEEP_MS.day],
			['5000', LEDGER_KEEP_MS.month],
		]);
		for (const units of [0, -100]) {
			await ledger.refund(units, reserved.period);
			expect(writes.pop()).toEqual([]);
		}
		expect(await ledger.refund(toUnits(0.2), reserved.period)).toEqual({ execution: 3000, day: 3000, month: 3000 });
		expect(writes.pop()?.map(({ value, ttlMs }) => [value, ttlMs])).toEqual([
			['3000', LEDGER_KEEP_MS.execution],
			['3000', LEDGER_KEEP_MS.day],
			['3000', LEDGER_KEEP_MS.month],
		]);
	});

	it("adds the account's former scopes to what `spent` says today and this month", async () => {
		const store = new MemoryStore(() => Date.UTC(2026, 10, 26, 3));
		await new SpendLedger(plainScope(store, 'former'), 'old execution', noLimits).reserve(toUnits(0.5));
		const ledger = new SpendLedger({ store, earlier: [], scope: 'account', former: ['former'] }, 'execution', noLimits);
		await ledger.reserve(toUnits(0.25));
		expect((await ledger.spent()).spent).toEqual({ execution: 2500, day: 7500, month: 7500 });
	});
});
