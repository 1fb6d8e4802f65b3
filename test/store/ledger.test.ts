/**
 * The money ledger (nodes/shared/money/ledger.ts) on every store (memory, SQLite, a real Redis):
 * reserve refuses what would pass the cap or a budget and writes nothing then; refund gives back to
 * the period reserved in; the day and month follow the store's clock (China time); two handles on
 * the same data (two processes) racing never pass a budget; an evicting Redis refuses the keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';

import { LEDGER_KEEP_MS, SpendLedger, toUnits, type MoneyLimits } from '../../nodes/shared/money/ledger';
import { StoreUnavailable, type DurableStore } from '../../nodes/shared/store/durableStore';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { parseRedisUrl, SharedRedis } from '../../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { freshKey } from './contract';
import { plainScope } from '../../nodes/shared/store/guardScope';

jest.setTimeout(120_000);

/** The store's clock, moved by the tests (memory and SQLite; Redis keeps its own). */
let clock = Date.UTC(2026, 10, 26, 3); // 11:00 China time
const stores: Array<{ close?: () => void }> = [];
let folder: string;
let redis: RunningRedis;
let evicting: RunningRedis;
const connections: SharedRedis[] = [];

/** DGW_TEST_STORES=memory (the mutation run: jest.mutation.config.js) runs the ledger on process memory only, with no Redis started. */
const onlyStores = process.env.DGW_TEST_STORES?.split(',');
const withRedis = onlyStores === undefined || onlyStores.includes('Redis');

beforeAll(async () => {
	folder = mkdtempSync(join(tmpdir(), 'dgw-ledger-'));
	if (!withRedis) return;
	[redis, evicting] = await Promise.all([
		startRedis(() => undefined),
		startRedis(() => undefined, {
			extraArgs: ['--maxmemory-policy', 'allkeys-lru'],
		}),
	]);
});
afterAll(async () => {
	stores.forEach((store) => store.close?.());
	connections.forEach((connection) => connection.close());
	rmSync(folder, { recursive: true, force: true });
	await Promise.all([redis?.stop(), evicting?.stop()]);
});

function redisHandle(url: string): DurableStore {
	const connection = new SharedRedis(parseRedisUrl(url));
	connections.push(connection);
	return new RedisDurableStore(connection, 'the test Redis', () => 'fix it here');
}

/** Two handles on the same data: one process's memory (one handle), one file (two handles), one Redis (two connections). */
const KINDS: Array<{
	kind: string;
	movable: boolean;
	open: () => [DurableStore, DurableStore];
}> = [
	{
		kind: 'memory',
		movable: true,
		open: () => {
			const store = new MemoryStore(() => clock);
			return [store, store];
		},
	},
	{
		kind: 'SQLite',
		movable: true,
		open: () => {
			const sqlite = nodeSqlite();
			if (!sqlite) throw new Error(`node:sqlite is needed (Node 24); this is Node ${process.version}`);
			const file = join(folder, `${freshKey('ledger')}.sqlite`.replace(/:/g, '-'));
			const pair: [SqliteDurableStore, SqliteDurableStore] = [new SqliteDurableStore(sqlite, file, () => clock), new SqliteDurableStore(sqlite, file, () => clock)];
			stores.push(...pair);
			return pair;
		},
	},
	{
		kind: 'Redis',
		movable: false,
		open: () => [redisHandle(redis.url), redisHandle(redis.url)],
	},
];

const limits = (over: Partial<MoneyLimits>): MoneyLimits => ({
	capYuan: 0,
	dailyYuan: 0,
	monthlyYuan: 0,
	...over,
});

describe.each(KINDS.filter(({ kind }) => onlyStores === undefined || onlyStores.includes(kind)))('the ledger on the $kind store', ({ open }) => {
	it('counts the execution, the day and the month in whole 1/10000 yuan, and refuses what would pass the cap, writing nothing', async () => {
		const [store] = open();
		const account = freshKey('account');
		const ledger = new SpendLedger(plainScope(store, account), 'exec-1', limits({ capYuan: 0.1 }));
		for (let send = 0; send < 2; send++) expect(await ledger.reserve(toUnits(0.035))).toMatchObject({ ok: true });
		const refused = await ledger.reserve(toUnits(0.035));
		expect(refused).toMatchObject({
			ok: false,
			limit: 'cap',
			limitUnits: 1000,
			spent: { execution: 700, day: 700, month: 700 },
		});
		expect((await ledger.spent()).spent).toEqual({
			execution: 700,
			day: 700,
			month: 700,
		});
		// Another execution of the account has its own cap, and shares the day.
		const other = new SpendLedger(plainScope(store, account), 'exec-2', limits({ capYuan: 0.1 }));
		expect(await other.reserve(toUnits(0.035))).toMatchObject({
			ok: true,
			spent: { execution: 350, day: 1050, month: 1050 },
		});
	});

	it('property: two processes reserving and refunding in any interleaving never bill beyond the budget, and the ledger equals the bill', raceProperty(open));
});

// Redis keeps its own clock (TIME): the calendar is checked on the stores whose clock the tests move.
describe.each(KINDS.filter((kind) => kind.movable))('the ledger on the $kind store, across China days and months', ({ open }) => {
	it('a daily budget counts every execution; a refund goes back to the period reserved in; the next China day starts at 0', async () => {
		const [store] = open();
		const account = freshKey('account');
		clock = Date.UTC(2026, 10, 26, 15, 59); // 23:59 China time
		const first = new SpendLedger(plainScope(store, account), 'a', limits({ dailyYuan: 2 }));
		const second = new SpendLedger(plainScope(store, account), 'b', limits({ dailyYuan: 2 }));
		const paid = await first.reserve(toUnits(1.2));
		expect(paid).toMatchObject({
			ok: true,
			period: {
				day: '2026-11-26',
				dayResetsAt: '2026-11-27T00:00:00+08:00',
				monthResetsAt: '2026-12-01T00:00:00+08:00',
			},
		});
		expect(await second.reserve(toUnits(1.2))).toMatchObject({
			ok: false,
			limit: 'day',
			spent: { day: 12000, execution: 0 },
		});
		clock += 2 * 60_000; // 00:01 the next day
		expect(await second.reserve(toUnits(1.2))).toMatchObject({
			ok: true,
			period: { day: '2026-11-27' },
			spent: { day: 12000, month: 24000 },
		});
		// The first gives back yesterday's reservation: today keeps the second's.
		if (!paid.ok) throw new Error('unreachable');
		await first.refund(toUnits(1.2), paid.period);
		expect((await second.spent()).spent).toMatchObject({
			day: 12000,
			month: 12000,
		});
	});

	it('each count belongs to its account: another account starts its execution, day and month at 0 (issue 41)', async () => {
		const [store] = open();
		const [one, two] = [freshKey('account'), freshKey('account')];
		expect(await new SpendLedger(plainScope(store, one), 'same execution', limits({})).reserve(toUnits(1.2))).toMatchObject({ ok: true });
		expect((await new SpendLedger(plainScope(store, two), 'same execution', limits({})).spent()).spent).toEqual({ execution: 0, day: 0, month: 0 });
		expect((await new SpendLedger(plainScope(store, one), 'another execution', limits({})).spent()).spent).toEqual({ execution: 0, day: 12000, month: 12000 });
	});

	it("a refund keeps each count expiring: after a day count's 3 days it is gone, the month's stays its 62 (issue 41)", async () => {
		const [store] = open();
		const account = freshKey('account');
		clock = Date.UTC(2026, 10, 26, 3);
		const ledger = new SpendLedger(plainScope(store, account), 'e', limits({}));
		const paid = await ledger.reserve(toUnits(2.4));
		if (!paid.ok) throw new Error('unreachable');
		await ledger.refund(toUnits(1.2), paid.period);
		const keys = [`spend|${account}|day|2026-11-26`, `spend|${account}|month|2026-11`];
		expect(await store.read(keys)).toEqual(['12000', '12000']);
		clock += LEDGER_KEEP_MS.day + 60_000;
		expect(await store.read(keys)).toEqual([undefined, '12000']);
		clock += LEDGER_KEEP_MS.month;
		expect(await store.read(keys)).toEqual([undefined, undefined]);
	});

	it("what the account's former scopes and an earlier store counted today adds up, and a refund gives back only its own (issue 41)", async () => {
		const [store] = open();
		const earlier = new MemoryStore(() => clock);
		const [account, former] = [freshKey('account'), freshKey('account')];
		clock = Date.UTC(2026, 10, 26, 3);
		await new SpendLedger(plainScope(store, former), 'old', limits({})).reserve(toUnits(0.5));
		await new SpendLedger(plainScope(earlier, account), 'before the Redis', limits({})).reserve(toUnits(0.3));
		const ledger = new SpendLedger({ store, earlier: [earlier], scope: account, former: [former] }, 'now', limits({ dailyYuan: 1 }));
		expect(await ledger.reserve(toUnits(0.3))).toMatchObject({ ok: false, limit: 'day', spent: { execution: 0, day: 8000, month: 8000 } });
		const paid = await ledger.reserve(toUnits(0.2));
		expect(paid).toMatchObject({ ok: true, spent: { execution: 2000, day: 10000, month: 10000 } });
		if (!paid.ok) throw new Error('unreachable');
		expect(await ledger.refund(toUnits(0.2), paid.period)).toEqual({ execution: 0, day: 8000, month: 8000 });
		expect((await new SpendLedger(plainScope(store, former), 'old', limits({})).spent()).spent.day).toBe(5000);
	});

	it('a monthly budget resets on the 1st at 00:00 China time', async () => {
		const [store] = open();
		const account = freshKey('account');
		clock = Date.UTC(2026, 10, 30, 15, 0); // 2026-11-30 23:00 China time
		const ledger = new SpendLedger(plainScope(store, account), 'a', limits({ monthlyYuan: 1 }));
		expect(await ledger.reserve(toUnits(0.8))).toMatchObject({ ok: true });
		expect(await ledger.reserve(toUnits(0.35))).toMatchObject({
			ok: false,
			limit: 'month',
			period: {
				month: '2026-11',
				monthResetsAt: '2026-12-01T00:00:00+08:00',
			},
		});
		clock += 3_600_000;
		expect(await ledger.reserve(toUnits(0.35))).toMatchObject({
			ok: true,
			period: { month: '2026-12' },
			spent: { month: 3500 },
		});
	});
});

(withRedis ? describe : describe.skip)('the ledger on a Redis that may evict keys', () => {
	it('is refused there, before anything is counted: a vanished spend would let the cap and budgets pay again', async () => {
		const ledger = new SpendLedger(plainScope(redisHandle(evicting.url), freshKey("account")), 'a', limits({ dailyYuan: 2 }));
		const error = await ledger.reserve(toUnits(1.2)).then(
			() => undefined,
			(failure: unknown) => failure,
		);
		expect(error).toBeInstanceOf(StoreUnavailable);
		expect((error as Error).message).toMatch(/maxmemory-policy allkeys-lru/);
		expect((error as StoreUnavailable).maybeWritten).toBe(false);
	});
});

/** Any interleaving of reserve and refund by two handles (two processes) on one store. */
function raceProperty(open: () => [DurableStore, DurableStore]) {
	return async () => {
		clock = Date.UTC(2026, 10, 26, 3);
		const price = fc.constantFrom(0.04, 0.2, 0.35, 1.2, 0.035);
		// Each step: reserve a price, then the gateway bills it or certainly does not (refund); `ticks` shifts the interleaving.
		const step = fc.record({
			yuan: price,
			billed: fc.boolean(),
			ticks: fc.nat(3),
		});
		await fc.assert(
			fc.asyncProperty(fc.array(step, { maxLength: 12 }), fc.array(step, { maxLength: 12 }), fc.constantFrom(1, 2, 2.5), async (left, right, budget) => {
				const [one, two] = open();
				const account = freshKey('race');
				let billed = 0;
				const run = async (store: DurableStore, steps: typeof left, name: string) => {
					const ledger = new SpendLedger(plainScope(store, account), name, limits({ dailyYuan: budget }));
					for (const { yuan, billed: isBilled, ticks } of steps) {
						for (let tick = 0; tick < ticks; tick++) await Promise.resolve();
						const reservation = await ledger.reserve(toUnits(yuan));
						if (!reservation.ok) continue;
						if (isBilled) billed += toUnits(yuan);
						else await ledger.refund(toUnits(yuan), reservation.period);
					}
				};
				await Promise.all([run(one, left, 'one'), run(two, right, 'two')]);
				expect(billed).toBeLessThanOrEqual(toUnits(budget));
				const { spent } = await new SpendLedger(plainScope(one, account), 'reader', limits({})).spent();
				expect(spent.day).toBe(billed);
			}),
			{ numRuns: 25 },
		);
	};
}
