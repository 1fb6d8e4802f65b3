/**
 * Every durable store this machine has, for tests of what is built on the store interface: memory
 * always; the SQLite file where Node has node:sqlite (npm test runs on Node 24); a real
 * redis-server. Each `open()` gives a fresh, empty store; `process()` a second handle on it, as
 * another n8n process has (its own connection or its own open file).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { parseRedisUrl, SharedRedis } from '../../nodes/shared/store/redis/connection';
import { closeAllRedis } from '../../nodes/shared/testing';
import { RedisDurableStore } from '../../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';

export interface OpenedStore {
	store: DurableStore;
	/** Another process's handle on the same store. */
	process(): DurableStore;
}

/** `clock` fixes the time of the stores on this host; Redis keeps its own (TIME). */
export type StoreOpener = (clock: () => number) => Promise<OpenedStore>;

/** Call at the top of a test file: starts what the stores need and closes it after. */
export function recordStores(): Array<[string, StoreOpener]> {
	let redis: RunningRedis | undefined;
	const connections: SharedRedis[] = [];
	const sqliteFiles: SqliteDurableStore[] = [];
	const folder = mkdtempSync(join(tmpdir(), 'dgw-record-stores-'));
	let files = 0;
	beforeAll(async () => {
		redis = await startRedis(() => undefined);
	});
	afterAll(async () => {
		for (const connection of connections) connection.close();
		for (const file of sqliteFiles) file.close();
		closeAllRedis();
		await redis?.stop();
		rmSync(folder, { recursive: true, force: true });
	});
	const stores: Array<[string, StoreOpener]> = [
		[
			'memory',
			async (clock) => {
				const store = new MemoryStore(clock);
				return { store, process: () => store };
			},
		],
	];
	const sqlite = nodeSqlite();
	if (sqlite) {
		stores.push([
			'SQLite',
			async (clock) => {
				const file = join(folder, `records-${++files}.sqlite`);
				const open = () => {
					const store = new SqliteDurableStore(sqlite, file, clock);
					sqliteFiles.push(store);
					return store;
				};
				return { store: open(), process: open };
			},
		]);
	}
	stores.push([
		'Redis',
		async () => {
			const connect = () => {
				const connection = new SharedRedis(parseRedisUrl((redis as RunningRedis).url));
				connections.push(connection);
				return new RedisDurableStore(connection, 'the test Redis', () => 'check the test Redis');
			};
			const first = new SharedRedis(parseRedisUrl((redis as RunningRedis).url));
			connections.push(first);
			await first.command('FLUSHDB', []);
			return { store: connect(), process: connect };
		},
	]);
	return stores;
}
