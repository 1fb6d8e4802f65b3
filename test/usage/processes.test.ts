/**
 * Usage counts stay exact when two OS processes count at once (queue-mode workers, or n8n and an
 * `n8n execute`): each run's counts are one atomic store update, on the SQLite file and on Redis.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chinaDay } from '../../nodes/shared/lookups/chinaTime';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { redisFor } from '../../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
import { closeAllRedis } from '../../nodes/shared/testing';
import { readUsage } from '../../nodes/shared/usage/counts';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { startScript } from '../store/processes';
import type { DurableStore } from '../../nodes/shared/store/durableStore';

const RUNS = 150;
let redis: RunningRedis;
const folder = mkdtempSync(join(tmpdir(), 'dgw-usage-race-'));

beforeAll(async () => {
	redis = await startRedis(() => undefined);
});
afterAll(async () => {
	closeAllRedis();
	await redis?.stop();
	rmSync(folder, { recursive: true, force: true });
});

async function race(kind: 'redis' | 'sqlite', target: string, account: string) {
	const racers = [0, 1].map(() => startScript(join(__dirname, 'usageRacer.ts'), [kind, target, account, String(RUNS)]));
	for (const racer of racers) expect(await racer.nextLine()).toBe('ready');
	for (const racer of racers) racer.child.stdin.write('go\n');
	for (const racer of racers) expect(await racer.nextLine()).toBe('done');
	await Promise.all(racers.map((racer) => racer.ended));
}

async function expectExactSums(store: DurableStore, account: string) {
	const { day, month } = await readUsage(store, [account], chinaDay(await store.now()));
	const runs = 2 * RUNS;
	const expected = { 'sms.sent': runs, 'sms.segments': 2 * runs, 'calls.smsSend': runs, 'calls.vehicleDetail': runs, spentUnits: 12_700 * runs };
	expect(day).toEqual(expected);
	expect(month).toEqual(expected);
}

describe('two processes counting usage at once', () => {
	it('give exact sums on the SQLite file', async () => {
		const file = join(folder, 'store.sqlite');
		await race('sqlite', file, 'race-sqlite');
		const sqlite = nodeSqlite();
		if (!sqlite) throw new Error('node:sqlite is missing');
		const store = new SqliteDurableStore(sqlite, file);
		await expectExactSums(store, 'race-sqlite');
		store.close();
	});

	it('give exact sums on Redis', async () => {
		await race('redis', redis.url, 'race-redis');
		await expectExactSums(new RedisDurableStore(redisFor({ url: redis.url }, 'usage-check'), 'the test Redis', () => 'fix'), 'race-redis');
	});
});
