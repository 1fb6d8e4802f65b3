/**
 * The telephone quota and kept answers at their edges (lookups/telephoneQuota.ts, lookups/reuse.ts):
 * plan values a credential may hold, counts per account and China day, and a kept answer's window
 * to the millisecond. test/unit/across-executions.test.ts has the common cases.
 */
import type { IExecuteFunctions } from 'n8n-workflow';
import { z } from 'zod/v4';

import { keepAnswer, keepForLater, readKeptAnswers, reuseFields, reuseWindowMs, takeKeptAnswers } from '../../nodes/shared/lookups/reuse';
import { StoreHints } from '../../nodes/shared/lookups/storeHints';
import { countCalls, quotaLine, quotaRefusal, reserveCalls, telephonePlanOf } from '../../nodes/shared/lookups/telephoneQuota';
import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { plainScope } from '../../nodes/shared/store/guardScope';

const HOUR = 3_600_000;

describe('the telephone plan a credential holds', () => {
	it.each([
		[0, 0],
		[2.7, 2],
		['40', 40],
		[-1, 100],
		[Number.POSITIVE_INFINITY, 100],
		['many', 100],
	])('Free Calls per Day %p counts as %p', (given, daily) => {
		expect(telephonePlanOf({ telephonePlan: 'freeQuota', telephoneDailyFreeCalls: given }).dailyFreeCalls).toBe(daily);
	});

	it('an unknown plan is Not Set; Member never refuses, even with Refuse Calls Beyond the Quota on', () => {
		expect(telephonePlanOf({ telephonePlan: 'gold' }).kind).toBe('notSet');
		expect(telephonePlanOf({ telephonePlan: 'member', telephoneRefuseBeyondQuota: true })).toEqual({ kind: 'member', dailyFreeCalls: 100, refuseBeyondQuota: false });
	});
});

describe('the quota counts per account and China day', () => {
	// 2026-06-01 10:00 China time.
	const at = Date.UTC(2026, 5, 1, 2);
	const plan = telephonePlanOf({ telephonePlan: 'freeQuota', telephoneDailyFreeCalls: 3 });

	it('a reservation says the day, when the quota starts again, what was used and what it got', async () => {
		const store = new MemoryStore(() => at);
		expect(await reserveCalls(plainScope(store, 'account'), plan, 2)).toEqual({ day: '2026-06-01', resetsAt: '2026-06-02T00:00:00+08:00', used: 0, granted: 2 });
		expect(await reserveCalls(plainScope(store, 'account'), plan, 2)).toEqual({ day: '2026-06-01', resetsAt: '2026-06-02T00:00:00+08:00', used: 2, granted: 1 });
		expect(await reserveCalls(plainScope(store, 'account'), plan, 2)).toMatchObject({ used: 3, granted: 0 });
		// Another account has its own quota.
		expect(await reserveCalls(plainScope(store, 'other account'), plan, 2)).toMatchObject({ used: 0, granted: 2 });
	});

	it('the next China day starts at 0', async () => {
		let now = at;
		const store = new MemoryStore(() => now);
		await reserveCalls(plainScope(store, 'account'), plan, 3);
		now = Date.UTC(2026, 5, 1, 16);
		expect(await reserveCalls(plainScope(store, 'account'), plan, 3)).toMatchObject({ day: '2026-06-02', used: 0, granted: 3 });
	});

	it('counting adds calls made, gives back ones not made, and a change of 0 writes nothing', async () => {
		const store = new MemoryStore(() => at);
		expect(await countCalls(plainScope(store, 'account'), undefined, 2)).toBe(2);
		expect(await countCalls(plainScope(store, 'account'), '2026-06-01', 1)).toBe(3);
		expect(await countCalls(plainScope(store, 'account'), undefined, -1)).toBe(2);
		expect(await countCalls(plainScope(store, 'account'), undefined, 0)).toBe(2);
		expect(await countCalls(plainScope(store, 'account'), '2026-05-31', 0)).toBe(0);
		expect((await reserveCalls(plainScope(store, 'account'), plan, 5)).granted).toBe(1);
	});

	it('a count that is not a number counts as 0', async () => {
		const store = new MemoryStore(() => at);
		const key = 'telephone-calls|account|2026-06-01';
		await store.update([key], () => ({ writes: [{ key, value: 'junk' }], result: undefined }));
		expect(await countCalls(plainScope(store, 'account'), undefined, 1)).toBe(1);
	});

	it('the words of the bill and of a refusal', () => {
		expect(quotaLine(plan, 2)).toBe('2 of 3 free calls today');
		expect(quotaLine(telephonePlanOf({ telephonePlan: 'member' }), 2)).toBe('2 calls today');
		const refusal = quotaRefusal(plan, 3, '2026-06-02T00:00:00+08:00');
		expect(refusal.message).toBe('The free telephone quota of 3 identifications a day is used up (3 made today, China time)');
		expect(refusal.description).toMatch(/^No call was made for this item\. The quota starts again at 2026-06-02T00:00:00\+08:00\. /);
	});
});

describe('a kept answer', () => {
	it('the window in hours, as ms; anything not a positive number is off', () => {
		expect(reuseWindowMs(1.5)).toBe(1.5 * HOUR);
		expect(reuseWindowMs('2')).toBe(2 * HOUR);
		expect(reuseWindowMs(-1)).toBe(0);
		expect(reuseWindowMs(Number.POSITIVE_INFINITY)).toBe(0);
	});

	it("is taken up to the reader's window to the millisecond, and kept by the store no longer than the keeper's", async () => {
		let now = 1_000;
		const store = new MemoryStore(() => now);
		expect(await keepAnswer(store, 'q', { value: 1 }, 3 * HOUR)).toBe(1_000);
		now += 2 * HOUR;
		expect((await readKeptAnswers(store, new Map([['q', 2 * HOUR]]))).get('q')).toEqual({ data: { value: 1 }, answeredAt: 1_000 });
		expect((await readKeptAnswers(store, new Map([['q', 2 * HOUR - 1]]))).size).toBe(0);
		now = 1_000 + 3 * HOUR;
		expect((await readKeptAnswers(store, new Map([['q', 24 * HOUR]]))).size).toBe(0);
	});

	it.each([
		['without its answer', { answeredAt: 0 }],
		['without when it was answered', { data: 1 }],
		['with a date that is text', { answeredAt: '0', data: 1 }],
	])('written %s is ignored', async (_label, value) => {
		const store = new MemoryStore(() => 10);
		await store.update(['lookup-answer|q'], () => ({ writes: [{ key: 'lookup-answer|q', value: JSON.stringify(value) }], result: undefined }));
		expect((await readKeptAnswers(store, new Map([['q', HOUR]]))).size).toBe(0);
	});

	it('is taken only when it fits the answer schema; no window asks the store nothing', async () => {
		const store = new MemoryStore(() => 5);
		const opened: string[] = [];
		const hints = {
			attempt: async <T>(feature: string, _fallback: string, work: (store: DurableStore) => Promise<T>) => {
				opened.push(feature);
				return await work(store);
			},
		} as unknown as StoreHints;
		const schema = z.object({ name: z.string() });
		expect(await keepForLater(hints, 'good', { name: 'Li' }, HOUR, 'the answer')).toBe(5);
		await keepForLater(hints, 'bad', { name: 7 }, HOUR, 'the answer');
		const taken = await takeKeptAnswers(hints, schema, new Map([['good', HOUR], ['bad', HOUR]]), 'plates');
		expect(Object.fromEntries(taken)).toEqual({ good: { answer: { name: 'Li' }, answeredAt: 5 } });
		opened.length = 0;
		expect((await takeKeptAnswers(hints, schema, new Map(), 'plates')).size).toBe(0);
		expect(opened).toEqual([]);
	});

	it.each([
		['an older version (without when to drop it)', JSON.stringify({ answeredAt: 0, data: 1 })],
		['something this package did not write', 'not json'],
	])('kept over a value of %s, is kept for its own window', async (_label, old) => {
		let now = 10;
		const store = new MemoryStore(() => now);
		await store.update(['lookup-answer|q'], () => ({ writes: [{ key: 'lookup-answer|q', value: old }], result: undefined }));
		await keepAnswer(store, 'q', { value: 2 }, HOUR);
		now += HOUR - 1;
		expect((await readKeptAnswers(store, new Map([['q', 2 * HOUR]]))).get('q')).toEqual({ data: { value: 2 }, answeredAt: 10 });
		now += 1;
		expect((await store.read(['lookup-answer|q']))[0]).toBeUndefined();
	});

	it('about a phone number is forgotten when that number is erased; another is not', async () => {
		const store = new MemoryStore(() => 10);
		await keepAnswer(store, 'tel', { value: 1 }, HOUR, '13900000001');
		await keepAnswer(store, 'plate', { value: 2 }, HOUR);
		expect(await store.erasePhone('13900000001')).toBe(1);
		expect([...(await readKeptAnswers(store, new Map([['tel', HOUR], ['plate', HOUR]]))).keys()]).toEqual(['plate']);
	});

	it('with the store failing, the run asks again and keeps nothing, and its warning says so in these words', async () => {
		const broken = Object.assign(new MemoryStore(() => 5), {
			label: 'Redis at 10.0.0.9:6379',
			read: async () => await Promise.reject(new Error('connection lost')),
			update: async () => await Promise.reject(new Error('connection lost')),
		});
		const shown: Array<{ message: string }> = [];
		const ctx = { addExecutionHints: (...hints: Array<{ message: string }>) => shown.push(...hints) } as unknown as IExecuteFunctions;
		const hints = new (class extends StoreHints {
			override async open() {
				return broken;
			}
		})(ctx);
		// Nothing is taken, whatever the answer schema accepts.
		expect((await takeKeptAnswers(hints, z.unknown(), new Map([['q', HOUR]]), 'plates')).size).toBe(0);
		expect(await keepForLater(hints, 'q', { name: 'Li' }, HOUR, 'the answer of 1 plate')).toBeUndefined();
		hints.show();
		expect(shown.length).toBe(2);
		expect(shown.map((hint) => hint.message)).toEqual([
			'Reuse Answers For could not use Redis at 10.0.0.9:6379: connection lost; the plates were asked again.',
			'Reuse Answers For could not use Redis at 10.0.0.9:6379: connection lost; the answer of 1 plate was not kept for later runs.',
		]);
	});

	it('the fields of an item: reused or not, and when it was answered in China time', () => {
		expect(reuseFields(false, undefined)).toEqual({ reused: false, answeredAt: null });
		expect(reuseFields(true, Date.UTC(2026, 5, 1, 2))).toEqual({ reused: true, answeredAt: '2026-06-01T10:00:00+08:00' });
	});
});
