import { chinaDay, chinaIso, nextChinaMidnight } from '../../nodes/shared/lookups/chinaTime';
import { stableJson, takeNews } from '../../nodes/shared/lookups/onlyNew';
import { quotaLine, reserveCalls, countCalls, telephonePlanOf } from '../../nodes/shared/lookups/telephoneQuota';
import { keepAnswer, readKeptAnswers, reuseWindowMs } from '../../nodes/shared/lookups/reuse';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { plainScope } from '../../nodes/shared/store/guardScope';

describe('China time', () => {
	it('16:00 UTC is already the next China day, whose quota resets at 16:00 UTC of that day', () => {
		const at = Date.UTC(2026, 11, 31, 16, 30);
		expect(chinaDay(at)).toBe('2027-01-01');
		expect(chinaIso(at)).toBe('2027-01-01T00:30:00+08:00');
		expect(new Date(nextChinaMidnight(at)).toISOString()).toBe('2027-01-01T16:00:00.000Z');
		expect(chinaIso(nextChinaMidnight(Date.UTC(2026, 1, 28, 15, 59)))).toBe('2026-03-01T00:00:00+08:00');
	});
});

describe('the telephone plan of a credential', () => {
	it('a credential saved before the field is Not Set and never refused; Free Quota refuses unless switched off', () => {
		expect(telephonePlanOf({ appCodeSecret: 'x' })).toEqual({ kind: 'notSet', dailyFreeCalls: 100, refuseBeyondQuota: false });
		expect(telephonePlanOf({ telephonePlan: 'member' }).refuseBeyondQuota).toBe(false);
		expect(telephonePlanOf({ telephonePlan: 'freeQuota', telephoneDailyFreeCalls: 30 })).toEqual({ kind: 'freeQuota', dailyFreeCalls: 30, refuseBeyondQuota: true });
		expect(telephonePlanOf({ telephonePlan: 'freeQuota', telephoneRefuseBeyondQuota: false }).refuseBeyondQuota).toBe(false);
		expect(telephonePlanOf({ telephonePlan: 'freeQuota', telephoneDailyFreeCalls: -3 }).dailyFreeCalls).toBe(100);
	});

	it('reservations never pass the quota; giving back never goes below 0', async () => {
		const store = new MemoryStore(() => Date.UTC(2026, 5, 1, 2));
		const plan = telephonePlanOf({ telephonePlan: 'freeQuota', telephoneDailyFreeCalls: 10 });
		const [first, second] = await Promise.all([reserveCalls(plainScope(store, 'account'), plan, 7), reserveCalls(plainScope(store, 'account'), plan, 7)]);
		expect(first.granted + second.granted).toBe(10);
		expect((await reserveCalls(plainScope(store, 'account'), plan, 1)).granted).toBe(0);
		expect(await countCalls(plainScope(store, 'account'), first.day, -50)).toBe(0);
		expect(quotaLine(plan, 87)).toBe('87 of 10 free calls today');
		expect(quotaLine(telephonePlanOf({}), 1)).toBe('1 call today');
	});
});

describe('what is new to a node', () => {
	it('records: only unseen ones, per question; changed: only when the content differs from the last output', async () => {
		const store = new MemoryStore(() => 1_000);
		const first = await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a', 'b']], ['q2', []]]));
		expect(Object.fromEntries(first)).toEqual({ q1: ['a', 'b'], q2: [] });
		const second = await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a', 'b', 'c']]]));
		expect(second.get('q1')).toEqual(['c']);
		// Another node has its own record.
		expect((await takeNews(store, 'wf|other', 'records', new Map([['q1', ['a']]]))).get('q1')).toEqual(['a']);
		// Start Over: everything is new once.
		expect((await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a']]]), { startOver: true })).get('q1')).toEqual(['a']);
		expect((await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a']]]))).get('q1')).toEqual([]);

		expect((await takeNews(store, 'wf|node', 'changed', new Map([['c1', ['x']]]))).get('c1')).toEqual(['x']);
		expect((await takeNews(store, 'wf|node', 'changed', new Map([['c1', ['x']]]))).get('c1')).toEqual([]);
		expect((await takeNews(store, 'wf|node', 'changed', new Map([['c1', ['y']]]))).get('c1')).toEqual(['y']);
		expect((await takeNews(store, 'wf|node', 'changed', new Map([['c1', ['x']]]))).get('c1')).toEqual(['x']);
	});

	it("n8n's Retry execution outputs again what the node's last run output, and the news since", async () => {
		const store = new MemoryStore(() => 1_000);
		await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a']]]));
		// The execution that took b failed in a later node; its retry reports b again, and c, new since.
		expect((await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a', 'b']]]))).get('q1')).toEqual(['b']);
		expect((await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a', 'b', 'c']]]), { retry: true })).get('q1')).toEqual(['b', 'c']);
		expect((await takeNews(store, 'wf|node', 'records', new Map([['q1', ['a', 'b', 'c']]]))).get('q1')).toEqual([]);
		await takeNews(store, 'wf|node', 'changed', new Map([['c1', ['x']]]));
		expect((await takeNews(store, 'wf|node', 'changed', new Map([['c1', ['x']]]), { retry: true })).get('c1')).toEqual(['x']);
		expect((await takeNews(store, 'wf|node', 'changed', new Map([['c1', ['x']]]))).get('c1')).toEqual([]);
	});

	it('equal content has one text, whatever the key order', () => {
		expect(stableJson({ b: 1, a: [{ d: null, c: 'x' }] })).toBe(stableJson({ a: [{ c: 'x', d: null }], b: 1 }));
	});
});

describe('answers kept for reuse', () => {
	it('a reader takes an answer only within its own window; a value it did not write is ignored', async () => {
		let now = 0;
		const store = new MemoryStore(() => now);
		expect(reuseWindowMs(0)).toBe(0);
		expect(reuseWindowMs('x')).toBe(0);
		await keepAnswer(store, 'q', { value: 1 }, reuseWindowMs(24));
		now = 3 * 3_600_000;
		expect((await readKeptAnswers(store, new Map([['q', reuseWindowMs(2)]]))).size).toBe(0);
		expect((await readKeptAnswers(store, new Map([['q', reuseWindowMs(4)]]))).get('q')).toEqual({ data: { value: 1 }, answeredAt: 0 });
		await store.update(['lookup-answer|junk'], () => ({ writes: [{ key: 'lookup-answer|junk', value: 'not json' }], result: undefined }));
		expect((await readKeptAnswers(store, new Map([['junk', reuseWindowMs(4)]]))).size).toBe(0);
		now = 25 * 3_600_000;
		expect((await readKeptAnswers(store, new Map([['q', reuseWindowMs(48)]]))).size).toBe(0);
	});

	it('a shorter window does not cut a longer one: an answer kept again for 1 h still serves a 24 h reader at 3.5 h', async () => {
		let now = 0;
		const store = new MemoryStore(() => now);
		await keepAnswer(store, 'q', { value: 1 }, reuseWindowMs(24));
		now = 2 * 3_600_000;
		// The 1-hour node finds the answer too old, pays again and keeps the new one.
		expect((await readKeptAnswers(store, new Map([['q', reuseWindowMs(1)]]))).size).toBe(0);
		await keepAnswer(store, 'q', { value: 2 }, reuseWindowMs(1));
		now = 3.5 * 3_600_000;
		expect((await readKeptAnswers(store, new Map([['q', reuseWindowMs(24)]]))).get('q')).toEqual({ data: { value: 2 }, answeredAt: 2 * 3_600_000 });
		expect((await readKeptAnswers(store, new Map([['q', reuseWindowMs(1)]]))).size).toBe(0);
		// Kept until the longest window asked for ends (24 h from the first answer), not longer.
		now = 24 * 3_600_000 + 1;
		expect((await readKeptAnswers(store, new Map([['q', reuseWindowMs(48)]]))).size).toBe(0);
	});
});
