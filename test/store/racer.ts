/**
 * A separate OS process that increments one counter in a durable store, for the tests that race
 * two processes: `racer.ts <redis|sqlite> <url or file> <key> <count>`. It opens the store, prints
 * "ready", waits for a line on stdin, then increments `count` times and prints the values it
 * wrote as one JSON line. With `hold <ms>` as the 5th and 6th arguments (SQLite) it instead takes
 * the file's write lock, writes `count` into `key`, prints "locked" and commits after `ms`.
 */
import { createInterface } from 'node:readline';

import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { redisFor } from '../../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
import { closeAllRedis } from '../../nodes/shared/testing';
import { increment } from './contract';

const [kind, target, key, countText, mode, holdText] = process.argv.slice(2);

function open(): DurableStore {
	if (kind === 'redis') return new RedisDurableStore(redisFor({ url: target }, 'racer'), 'Redis (racer)', () => 'racer');
	const sqlite = nodeSqlite();
	if (!sqlite) throw new Error(`node:sqlite is missing in Node ${process.version}`);
	return new SqliteDurableStore(sqlite, target);
}

/** Holds the SQLite file's write lock, with `value` written under `key`, for `ms`, in a raw connection. */
async function hold(value: string, ms: number) {
	const sqlite = nodeSqlite();
	if (!sqlite) throw new Error('node:sqlite is missing');
	// The store creates the table; this reuses its layout through one update first.
	const store = new SqliteDurableStore(sqlite, target);
	await store.read([key]);
	store.close();
	const database = new sqlite.DatabaseSync(target);
	database.exec('PRAGMA busy_timeout = 5000');
	database.exec('BEGIN IMMEDIATE');
	const { storedKeyName } = await import('../../nodes/shared/store/keyName');
	database.prepare('INSERT INTO store_entries (key, value, expires_at) VALUES (?, ?, NULL) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(storedKeyName(key), value);
	process.stdout.write('locked\n');
	await new Promise((resolve) => setTimeout(resolve, ms));
	database.exec('COMMIT');
	database.close();
	process.stdout.write('committed\n');
}

async function race() {
	const store = open();
	await store.now();
	process.stdout.write('ready\n');
	const lines = createInterface({ input: process.stdin });
	await new Promise<void>((resolve) => lines.once('line', () => resolve()));
	lines.close();
	const written: number[] = [];
	for (let index = 0; index < Number(countText); index++) written.push(await increment(store, key));
	process.stdout.write(`${JSON.stringify(written)}\n`);
	closeAllRedis();
	if (store instanceof SqliteDurableStore) store.close();
}

(mode === 'hold' ? hold(countText, Number(holdText)) : race()).catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
	process.exit(1);
});
