/** The usage counts' store format and their China day and month (usage/counts.ts), on the memory store. */
import { SMS_TASK_STATUS } from '../../nodes/shared/gateway/catalog';
import { plainScope } from '../../nodes/shared/store/guardScope';
import { hostClock } from '../../nodes/shared/store/hostClock';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { addUsage, isEmpty, readCounts, readUsage, sumCounts, usageDayKey, usageMonthKey, USAGE_KEEP_MS } from '../../nodes/shared/usage/counts';
import { countDeliveries, deliveryCounts } from '../../nodes/shared/usage/deliveries';
import { storesOfCounts } from '../../nodes/shared/usage/report';

const at = (iso: string) => Date.parse(`${iso}+08:00`);
const realClock = hostClock.now;
afterEach(() => {
	hostClock.now = realClock;
});

describe('usage counts', () => {
	it('read a damaged or foreign value as none, and keep only whole counts above 0', () => {
		expect([readCounts(undefined), readCounts('not json'), readCounts('[1,2]'), readCounts('7'), readCounts('null'), readCounts('"ab"')]).toEqual([{}, {}, {}, {}, {}, {}]);
		expect(readCounts('{"a":0,"b":1}')).toEqual({ b: 1 });
		expect(readCounts('{"sms.sent":3,"spentUnits":-5,"reused":1.5,"future.count":2,"text":"13900000000"}')).toEqual({ 'sms.sent': 3, 'future.count': 2 });
		expect(sumCounts({ a: 1, b: 2 }, { b: 3, c: 4 })).toEqual({ a: 1, b: 5, c: 4 });
		// A sum that comes to 0 or less leaves the name out.
		expect(sumCounts({ a: 1, b: 2 }, { a: -1, b: -3 })).toEqual({});
		expect([isEmpty({}), isEmpty({ a: 0 }), isEmpty({ a: 0, b: 1 })]).toEqual([true, true, false]);
	});

	it('keep exactly the summed counts under the day and month keys, each with its lifetime', async () => {
		const now = at('2026-11-24T10:00:00');
		hostClock.now = () => now;
		const store = new MemoryStore(() => now);
		const update = jest.spyOn(store, 'update');
		await addUsage(store, [
			{ account: 'a', counts: { 'sms.sent': 1, spentUnits: 400 } },
			{ account: 'a', counts: { 'sms.sent': 2 } },
		]);
		const decide = update.mock.calls[0][1];
		const decided = decide([undefined, undefined], now);
		expect(decided.writes).toEqual([
			{ key: usageDayKey('a', '2026-11-24'), value: JSON.stringify({ 'sms.sent': 3, spentUnits: 400 }), ttlMs: USAGE_KEEP_MS.day },
			{ key: usageMonthKey('a', '2026-11'), value: JSON.stringify({ 'sms.sent': 3, spentUnits: 400 }), ttlMs: USAGE_KEEP_MS.month },
		]);
		expect(await store.read([usageDayKey('a', '2026-11-24')])).toEqual([JSON.stringify({ 'sms.sent': 3, spentUnits: 400 })]);
	});

	it("learn how far the store's clock is from this host's, so the next update names the store's day at once", async () => {
		hostClock.now = () => at('2026-11-25T12:00:00');
		// The store's clock a day behind this host's (a Redis elsewhere keeps its own).
		const store = new MemoryStore(() => at('2026-11-24T12:00:00'));
		const update = jest.spyOn(store, 'update');
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 1 } }]);
		// The first guess (this host's day) was wrong: named again inside a second update.
		expect(update).toHaveBeenCalledTimes(2);
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 1 } }]);
		expect(update).toHaveBeenCalledTimes(3);
		// Counts named for their day are not named again, whatever the guess of today.
		await addUsage(store, [{ account: 'b', day: '2026-11-20', counts: { 'sms.delivered': 1 } }]);
		expect(update).toHaveBeenCalledTimes(4);
		expect((await readUsage(store, ['a'], '2026-11-24')).day).toEqual({ 'sms.sent': 2 });
		expect((await readUsage(store, ['b'], '2026-11-20')).day).toEqual({ 'sms.delivered': 1 });
	});

	it("name today's counts again, but only today's, when the store's day differs from the guess, and give up after three tries", async () => {
		hostClock.now = () => at('2026-11-25T12:00:00');
		// Each store a day behind this host, and new to this process (no offset learned yet).
		const behind = () => new MemoryStore(() => at('2026-11-24T12:00:00'));
		const named = behind();
		const namedUpdates = jest.spyOn(named, 'update');
		await addUsage(named, [{ account: 'b', day: '2026-11-20', counts: { 'sms.delivered': 1 } }]);
		expect(namedUpdates).toHaveBeenCalledTimes(1);
		const mixed = behind();
		const mixedUpdates = jest.spyOn(mixed, 'update');
		await addUsage(mixed, [
			{ account: 'b', day: '2026-11-20', counts: { 'sms.delivered': 1 } },
			{ account: 'a', counts: { 'sms.sent': 1 } },
		]);
		expect(mixedUpdates).toHaveBeenCalledTimes(2);
		expect((await readUsage(mixed, ['a'], '2026-11-24')).day).toEqual({ 'sms.sent': 1 });
		expect((await readUsage(mixed, ['b'], '2026-11-20')).day).toEqual({ 'sms.delivered': 1 });
		// A store whose day changes at every update.
		let day = 0;
		const restless = new MemoryStore(() => at('2026-11-01T12:00:00') + day++ * 86_400_000);
		const tries = jest.spyOn(restless, 'update');
		await expect(addUsage(restless, [{ account: 'a', counts: { 'sms.sent': 1 } }])).rejects.toThrow("The store's China day kept changing while the usage was counted");
		expect(tries).toHaveBeenCalledTimes(3);
	});

	it("put a run on the day the store's clock says inside the update, when midnight passed since this host's guess", async () => {
		let now = at('2026-11-30T23:59:59');
		// The store's own clock, apart from this host's (as a Redis's is).
		const store = new MemoryStore(() => now);
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 1 } }]);
		// The next update guesses 2026-11-30 from this host's clock plus the offset it learned; the store says December.
		now = at('2026-12-01T00:00:00');
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 2 } }]);
		expect(await readUsage(store, ['a'], '2026-11-30')).toEqual({ day: { 'sms.sent': 1 }, month: { 'sms.sent': 1 } });
		expect(await readUsage(store, ['a'], '2026-12-01')).toEqual({ day: { 'sms.sent': 2 }, month: { 'sms.sent': 2 } });
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
		expect((await readUsage(store, ['a'], '2026-11-30')).day).toEqual({ 'sms.delivered': 2 });
		expect(await readUsage(store, ['b'], '2026-12-01')).toEqual({ day: { 'sms.failed': 1 }, month: { 'sms.failed': 1 } });
		expect((await readUsage(store, ['a'], '2026-12-01')).month).toEqual({});
	});

	it('writes nothing for nothing to count', async () => {
		const store = new MemoryStore();
		const update = jest.spyOn(store, 'update');
		await addUsage(store, [{ account: 'a', counts: { 'sms.sent': 0 } }]);
		expect(update).not.toHaveBeenCalled();
	});
});

describe("an account's counts under several scopes and stores", () => {
	it('read as one sum over the scopes asked for, leaving the others out', async () => {
		const store = new MemoryStore(() => at('2026-11-24T10:00:00'));
		await addUsage(store, [
			{ account: 'scope-now', day: '2026-11-24', counts: { 'sms.sent': 2 } },
			{ account: 'scope-before', day: '2026-11-24', counts: { 'sms.sent': 1, 'calls.vehicleDetail': 1 } },
			{ account: 'another-account', day: '2026-11-24', counts: { 'sms.sent': 5 } },
		]);
		expect(await readUsage(store, ['scope-now', 'scope-before'], '2026-11-24')).toEqual({
			day: { 'sms.sent': 3, 'calls.vehicleDetail': 1 },
			month: { 'sms.sent': 3, 'calls.vehicleDetail': 1 },
		});
		expect(await readUsage(store, [], '2026-11-24')).toEqual({ day: {}, month: {} });
	});

	it("count a delivery under the scope its send's record names, on the day it was sent; a record without one counts nowhere", () => {
		const sentAt = at('2026-11-23T23:30:00');
		const marks = new Map([
			['T1', { first: true, before: { sentAt, scope: 'account:acme' } }],
			['T2', { first: true, before: { sentAt, scope: 'account:acme' } }],
			['T3', { first: true, before: { sentAt } }],
			['T4', { first: false, before: { sentAt, scope: 'account:acme' } }],
			// A report whose send the store did not know, one whose send has no time, one still sending.
			['T5', { first: true }],
			['T6', { first: true, before: { scope: 'account:acme' } }],
			['T7', { first: true, before: { sentAt, scope: 'account:acme' } }],
		]);
		const statuses = new Map([
			['T1', SMS_TASK_STATUS.delivered],
			['T2', SMS_TASK_STATUS.failed],
			['T3', SMS_TASK_STATUS.delivered],
			['T4', SMS_TASK_STATUS.delivered],
			['T5', SMS_TASK_STATUS.delivered],
			['T6', SMS_TASK_STATUS.delivered],
			['T7', SMS_TASK_STATUS.sending],
		]);
		expect(deliveryCounts(marks, statuses)).toEqual([{ account: 'account:acme', day: '2026-11-23', counts: { 'sms.delivered': 1, 'sms.failed': 1 } }]);
	});

	it('count final reports in one update, and a store that fails costs the counts, never the report', async () => {
		const store = new MemoryStore(() => at('2026-11-24T10:00:00'));
		const marks = new Map([['T1', { first: true, before: { sentAt: at('2026-11-24T09:00:00'), scope: 'account:acme' } }]]);
		await countDeliveries(store, marks, new Map([['T1', SMS_TASK_STATUS.failed]]));
		expect((await readUsage(store, ['account:acme'], '2026-11-24')).day).toEqual({ 'sms.failed': 1 });
		const broken = Object.assign(new MemoryStore(), { update: async () => await Promise.reject(new Error('the store is down')) });
		await expect(countDeliveries(broken, marks, new Map([['T1', SMS_TASK_STATUS.failed]]))).resolves.toBeUndefined();
	});

	it("are read from the credential's store, the stores before it and the delivery reports' store, each once", () => {
		const [credential, file, queue] = [new MemoryStore(), new MemoryStore(), new MemoryStore()];
		const guard = { ...plainScope(credential, 'account:acme'), earlier: [queue, file] };
		expect(storesOfCounts({ store: credential, deliveryStore: file }, guard)).toEqual([credential, queue, file]);
		expect(storesOfCounts({ store: credential, deliveryStore: credential }, plainScope(credential, 'account:acme'))).toEqual([credential]);
		// Two connections to one Redis are one store; two memories are not.
		const redis = (label: string) => Object.assign(new MemoryStore(), { kind: 'redis', label }) as unknown as MemoryStore;
		const [credentialRedis, queueRedis] = [redis('the Redis at 127.0.0.1:6379/0'), redis("n8n's queue Redis at 127.0.0.1:6379/0")];
		expect(storesOfCounts({ store: credentialRedis, deliveryStore: queueRedis }, { ...plainScope(credentialRedis, 'account:acme'), earlier: [queueRedis] })).toEqual([credentialRedis]);
		expect(storesOfCounts({ store: credential, deliveryStore: queue }, plainScope(credential, 'account:acme'))).toEqual([credential, queue]);
	});
});
