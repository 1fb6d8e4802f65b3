/**
 * Usage → Get's answer (usage/report.ts) on staged counts in memory stores: how one period's counts
 * read, which past days it answers for, and the whole report over an account's scopes and stores,
 * its budgets, its telephone quota and the opt-out list's size.
 */
import { countCalls } from '../../nodes/shared/lookups/telephoneQuota';
import { plainScope } from '../../nodes/shared/store/guardScope';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { changeOptOuts, readOptOuts, readOptOutSize } from '../../nodes/shared/store/optOutList';
import { addUsage } from '../../nodes/shared/usage/counts';
import { checkPastDay, presentCounts, usageReport, USAGE_DAYS_KEPT } from '../../nodes/shared/usage/report';

const at = (iso: string) => Date.parse(`${iso}+08:00`);
const NO_LIMITS = { capYuan: 0, dailyYuan: 0, monthlyYuan: 0 };
const NOT_SET = { kind: 'notSet' as const, dailyFreeCalls: 100, refuseBeyondQuota: false };

describe("one period's counts", () => {
	it('read as calls by operation (paid apart from free), refusals, reuse and SMS, with pending derived', () => {
		const counts = {
			'calls.vehicleDetail': 2,
			'calls.smsSend': 3,
			'calls.smsStatus': 4,
			'calls.someFutureOperation': 1,
			spentUnits: 24_150,
			savedUnits: 12_000,
			reused: 1,
			'refused.cap': 1,
			'refused.day': 2,
			'refused.month': 3,
			'refused.quota': 4,
			'sms.sent': 5,
			'sms.segments': 7,
			'sms.skipped.repeat': 2,
			'sms.skipped.optedOut': 1,
			'sms.delivered': 2,
			'sms.failed': 1,
		};
		expect(presentCounts(counts)).toEqual({
			spentYuan: 2.415,
			paidCalls: { 'Get Vehicle Detail': 2, 'Send SMS': 3 },
			freeCalls: { 'Get SMS Status': 4, someFutureOperation: 1 },
			refused: { cap: 1, dailyBudget: 2, monthlyBudget: 3, telephoneQuota: 4 },
			reused: { answers: 1, savedYuan: 1.2 },
			sms: { sent: 5, segments: 7, skipped: { repeat: 2, optedOut: 1, outsideWindow: 0 }, delivered: 2, failed: 1, pending: 2 },
		});
	});

	it('read as zeros when nothing was counted, and never a negative pending', () => {
		expect(presentCounts({})).toEqual({
			spentYuan: 0,
			paidCalls: {},
			freeCalls: {},
			refused: { cap: 0, dailyBudget: 0, monthlyBudget: 0, telephoneQuota: 0 },
			reused: { answers: 0, savedYuan: 0 },
			sms: { sent: 0, segments: 0, skipped: { repeat: 0, optedOut: 0, outsideWindow: 0 }, delivered: 0, failed: 0, pending: 0 },
		});
		// Reports of SMS sent on a day before: more final than sent that day.
		expect((presentCounts({ 'sms.sent': 1, 'sms.delivered': 2 }).sms as { pending: number }).pending).toBe(0);
	});
});

describe('a past day', () => {
	const now = at('2026-12-01T09:00:00');

	it('is a China day of the days kept, before today', () => {
		expect(USAGE_DAYS_KEPT).toBe(93);
		expect([checkPastDay('2026-11-30', now), checkPastDay('2026-12-01', now), checkPastDay('2026-08-31', now)]).toEqual([undefined, undefined, undefined]);
	});

	it('is refused, saying why, when it is no date, after today, or no longer kept', () => {
		expect(checkPastDay('2026-8-31', now)).toBe('"2026-8-31" is not a date like 2026-11-24');
		expect(checkPastDay('2026-02-30', now)).toBe('"2026-02-30" is not a date like 2026-11-24');
		expect(checkPastDay('2026-13-01', now)).toBe('"2026-13-01" is not a date like 2026-11-24');
		expect(checkPastDay(' 2026-11-30', now)).toBe('" 2026-11-30" is not a date like 2026-11-24');
		expect(checkPastDay('2026-12-02', now)).toBe('2026-12-02 is after today (2026-12-01, China time)');
		expect(checkPastDay('2026-08-30', now)).toBe('2026-08-30 is no longer kept: days are kept 93 days (the oldest is 2026-08-31)');
	});

	it('follows the China day: at 23:30 UTC the China day is already the next', () => {
		const lateUtc = Date.parse('2026-11-30T23:30:00Z');
		expect(checkPastDay('2026-12-01', lateUtc)).toBeUndefined();
		expect(checkPastDay('2026-12-02', lateUtc)).toBe('2026-12-02 is after today (2026-12-01, China time)');
	});
});

describe("the opt-out list's size", () => {
	it('follows the account across a rotated App Code and a Redis added: a number removed counts where it was listed', async () => {
		const file = new MemoryStore();
		const before = plainScope(file, 'gateway:before-rotation');
		await changeOptOuts(before, ['13900001111', '13900002222'], 'add');
		expect(await readOptOutSize(before)).toBe(2);

		const rotated = { ...plainScope(file, 'account:acme'), former: ['gateway:before-rotation'] };
		expect(await readOptOutSize(rotated)).toBe(2);
		await changeOptOuts(rotated, ['13900001111'], 'remove');
		expect(await readOptOutSize(rotated)).toBe(1);
		// Removing a number that is not listed, or again, changes nothing.
		await changeOptOuts(rotated, ['13900001111', '13900009999'], 'remove');
		expect(await readOptOutSize(rotated)).toBe(1);
		await changeOptOuts(rotated, ['13900003333', '13900002222'], 'add');
		expect(await readOptOutSize(rotated)).toBe(2);

		// A Redis added: the file is read as the store before it.
		const redisLike = new MemoryStore();
		const moved = { ...plainScope(redisLike, 'account:acme'), former: ['gateway:before-rotation'], earlier: [file] };
		expect(await readOptOutSize(moved)).toBe(2);
		await changeOptOuts(moved, ['13900002222'], 'remove');
		await changeOptOuts(moved, ['13900004444', '13900005555'], 'add');
		expect(await readOptOutSize(moved)).toBe(3);
		expect([...(await readOptOuts(moved, ['13900002222', '13900003333', '13900004444'])).keys()]).toEqual(['13900003333', '13900004444']);
	});
});

describe("an account's report", () => {
	const now = at('2026-11-27T21:00:00');

	it("adds the account's scopes in every store once, and leaves other accounts out", async () => {
		const [store, file, deliveries] = [new MemoryStore(() => now), new MemoryStore(() => now), new MemoryStore(() => now)];
		await addUsage(store, [
			{ account: 'account:acme', counts: { 'calls.smsSend': 2, 'sms.sent': 2, spentUnits: 800 } },
			{ account: 'gateway:before-rotation', counts: { 'calls.smsSend': 1, 'sms.sent': 1, spentUnits: 400 } },
			{ account: 'account:someone-else', counts: { 'calls.smsSend': 9, 'sms.sent': 9 } },
			{ account: 'account:acme', day: '2026-11-20', counts: { 'calls.vehicleDetail': 1, spentUnits: 12_000 } },
		]);
		await addUsage(file, [{ account: 'account:acme', counts: { 'sms.skipped.repeat': 4 } }]);
		await addUsage(deliveries, [{ account: 'gateway:before-rotation', counts: { 'sms.delivered': 2 } }]);
		const guard = { ...plainScope(store, 'account:acme'), former: ['gateway:before-rotation'], earlier: [file] };

		const report = await usageReport({ store, deliveryStore: deliveries }, { guard, limits: NO_LIMITS, telephone: NOT_SET });
		expect(report.today).toMatchObject({ date: '2026-11-27', spentYuan: 0.12, paidCalls: { 'Send SMS': 3 }, sms: { sent: 3, delivered: 2, pending: 1, skipped: { repeat: 4 } } });
		expect(report.thisMonth).toMatchObject({ month: '2026-11', spentYuan: 1.32, paidCalls: { 'Send SMS': 3, 'Get Vehicle Detail': 1 } });
		expect(report).not.toHaveProperty('pastDay');
		// The delivery store in the stores before is read once: the same sums.
		const once = await usageReport({ store, deliveryStore: file }, { guard: { ...guard, earlier: [file, deliveries] }, limits: NO_LIMITS, telephone: NOT_SET });
		expect(once.today).toEqual(report.today);

		const withPast = await usageReport({ store, deliveryStore: deliveries }, { guard, limits: NO_LIMITS, telephone: NOT_SET, pastDay: '2026-11-20' });
		expect(withPast.pastDay).toMatchObject({ date: '2026-11-20', spentYuan: 1.2, paidCalls: { 'Get Vehicle Detail': 1 }, sms: { sent: 0 } });
	});

	it('shows each budget set with what is left and when it resets, none for a budget not set, and the cap', async () => {
		const store = new MemoryStore(() => now);
		const guard = plainScope(store, 'account:acme');
		const set = await usageReport({ store, deliveryStore: store }, { guard, limits: { capYuan: 0.5, dailyYuan: 2, monthlyYuan: 30 }, telephone: NOT_SET });
		expect(set.budgets).toEqual({
			daily: { budgetYuan: 2, countedYuan: 0, leftYuan: 2, resetsAt: '2026-11-28T00:00:00+08:00' },
			monthly: { budgetYuan: 30, countedYuan: 0, leftYuan: 30, resetsAt: '2026-12-01T00:00:00+08:00' },
			capPerExecutionYuan: 0.5,
		});
		// What the ledger counted today and this month (its units: 1/10000 yuan).
		await store.update(['spend|account:acme|day|2026-11-27', 'spend|account:acme|month|2026-11'], () => ({
			writes: [
				{ key: 'spend|account:acme|day|2026-11-27', value: '5000' },
				{ key: 'spend|account:acme|month|2026-11', value: '350000' },
			],
			result: undefined,
		}));
		const spent = await usageReport({ store, deliveryStore: store }, { guard, limits: { capYuan: 0, dailyYuan: 2, monthlyYuan: 30 }, telephone: NOT_SET });
		expect(spent.budgets).toMatchObject({ daily: { countedYuan: 0.5, leftYuan: 1.5 }, monthly: { countedYuan: 35, leftYuan: 0 } });
		const unset = await usageReport({ store, deliveryStore: store }, { guard, limits: NO_LIMITS, telephone: NOT_SET });
		expect(unset.budgets).toEqual({ daily: null, monthly: null, capPerExecutionYuan: null });
		expect(unset).toMatchObject({ asOf: '2026-11-27T21:00:00+08:00', store: store.label, optOutListSize: 0 });
	});

	it('tells the free telephone calls left, none for a member, and the opt-out list size', async () => {
		const store = new MemoryStore(() => now);
		const guard = plainScope(store, 'account:acme');
		await changeOptOuts(guard, ['13900001111', '13900002222'], 'add');
		const free = await usageReport({ store, deliveryStore: store }, { guard, limits: NO_LIMITS, telephone: { kind: 'freeQuota', dailyFreeCalls: 50, refuseBeyondQuota: true } });
		expect(free.telephone).toEqual({ plan: 'freeQuota', callsToday: 0, freeCallsLeft: 50, resetsAt: '2026-11-28T00:00:00+08:00' });
		expect(free.optOutListSize).toBe(2);
		const member = await usageReport({ store, deliveryStore: store }, { guard, limits: NO_LIMITS, telephone: { kind: 'member', dailyFreeCalls: 100, refuseBeyondQuota: false } });
		expect(member.telephone).toMatchObject({ plan: 'member', freeCallsLeft: null });
		// More calls than the quota: none left, never fewer than none.
		await countCalls(guard, '2026-11-27', 60);
		const used = await usageReport({ store, deliveryStore: store }, { guard, limits: NO_LIMITS, telephone: { kind: 'freeQuota', dailyFreeCalls: 50, refuseBeyondQuota: true } });
		expect(used.telephone).toMatchObject({ callsToday: 60, freeCallsLeft: 0 });
	});
});
