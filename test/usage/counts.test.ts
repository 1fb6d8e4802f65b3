/** The usage counts' store format and their China day and month (usage/counts.ts), on the memory store. */
import { hostClock } from '../../nodes/shared/store/hostClock';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { addUsage, readCounts, readUsage, sumCounts } from '../../nodes/shared/usage/counts';

const at = (iso: string) => Date.parse(`${iso}+08:00`);
const realClock = hostClock.now;
afterEach(() => {
	hostClock.now = realClock;
});

describe('usage counts', () => {
	it('read a damaged or foreign value as none, and keep only whole counts above 0', () => {
		expect([readCounts(undefined), readCounts('not json'), readCounts('[1,2]'), readCounts('7')]).toEqual([{}, {}, {}, {}]);
		expect(readCounts('{"sms.sent":3,"spentUnits":-5,"reused":1.5,"future.count":2,"text":"13900000000"}')).toEqual({ 'sms.sent': 3, 'future.count': 2 });
		expect(sumCounts({ a: 1, b: 2 }, { b: 3, c: 4 })).toEqual({ a: 1, b: 5, c: 4 });
	});

	it("put a run on the day the store's clock says inside the update, when midnight passed since this host's guess", async () => {
		let now = at('2026-11-30T23:59:59');
		// The store's own clock, apart from this host's (as a Redis's is).
		const store = new MemoryStore(() => now);
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 1 } }]);
		// The next update guesses 2026-11-30 from this host's clock plus the offset it learned; the store says December.
		now = at('2026-12-01T00:00:00');
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 2 } }]);
		expect(await readUsage(store, 'a', '2026-11-30')).toEqual({ day: { 'sms.sent': 1 }, month: { 'sms.sent': 1 } });
		expect(await readUsage(store, 'a', '2026-12-01')).toEqual({ day: { 'sms.sent': 2 }, month: { 'sms.sent': 2 } });
	});

	it('add counts named for their day  (deliveries, on the day of their send) there, and several accounts in one update', async () => {
		const store = new MemoryStore();
		hostClock.now = () => at('2026-12-01T08:00:00');
		const update = jest.spyOn(store, 'update');
		await addUsage(store, [
			{ account: 'a', day: '2026-11-30', counts: { 'sms.delivered': 1 } },
			{ account: 'b', counts: { 'sms.failed': 1 } },
			{ account: 'a', day: '2026-11-30', counts: { 'sms.delivered': 1 } },
		]);
		expect(update).toHaveBeenCalledTimes(1);
		expect((await readUsage(store, 'a', '2026-11-30')).day).toEqual({ 'sms.delivered': 2 });
		expect(await readUsage(store, 'b', '2026-12-01')).toEqual({ day: { 'sms.failed': 1 }, month: { 'sms.failed': 1 } });
		expect((await readUsage(store, 'a', '2026-12-01')).month).toEqual({});
	});

	it('writes nothing for nothing to count', async () => {
		const store = new MemoryStore();
		const update = jest.spyOn(store, 'update');
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 0 } }]);
		expect(update).not.toHaveBeenCalled();
	});
});
