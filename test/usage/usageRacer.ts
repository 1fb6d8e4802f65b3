/**
 * A separate OS process that counts usage the way a node run does (usage/counts.ts addUsage), for
 * the test that races two processes: `usageRacer.ts <redis|sqlite> <url or file> <account> <runs>`.
 * It opens the store, prints "ready", waits for a line on stdin, then adds one run's counts `runs`
 * times (one SMS of 2 segments and one 1.2-yuan lookup each) and prints "done".
 */
import { createInterface } from 'node:readline';

import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { redisFor } from '../../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
import { closeAllRedis } from '../../nodes/shared/testing';
import { addUsage } from '../../nodes/shared/usage/counts';

const [kind, target, account, runsText] = process.argv.slice(2);

function open(): DurableStore {
	if (kind === 'redis') return new RedisDurableStore(redisFor({ url: target }, 'usage-racer'), 'Redis (usage racer)', () => 'racer');
	const sqlite = nodeSqlite();
	if (!sqlite) throw new Error(`node:sqlite is missing in Node ${process.version}`);
	return new SqliteDurableStore(sqlite, target);
}

async function race() {
	const store = open();
	await store.now();
	process.stdout.write('ready\n');
	const lines = createInterface({ input: process.stdin });
	await new Promise<void>((resolve) => lines.once('line', () => resolve()));
	lines.close();
	const run = { 'sms.sent': 1, 'sms.segments': 2, 'calls.smsSend': 1, 'calls.vehicleDetail': 1, spentUnits: 700 + 12_000 };
	for (let index = 0; index < Number(runsText); index++) await addUsage(store, [{ account, counts: run }]);
	process.stdout.write('done\n');
	closeAllRedis();
	if (store instanceof SqliteDurableStore) store.close();
}

race().catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
	process.exit(1);
});
