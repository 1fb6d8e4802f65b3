/**
 * Erasing one number (store/erasePhone.ts) on staged entries, without the engine: the number as the
 * nodes keep it, each kind of store, and erasePhoneEverywhere's targets (this host's SQLite file,
 * n8n's queue Redis in queue mode, each Redis given), each named by its label and count.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { erasePhone, erasePhoneEverywhere, normalizedPhone } from '../../nodes/shared/store/erasePhone';
import { nodeSqlite, STORE_FILE_VARIABLE } from '../../nodes/shared/store/hostEnvironment';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { redisFor, releaseRedis } from '../../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
import type { RunningRedis } from '../../scripts/n8n-runtime/queue';
import { freePort } from '../../scripts/n8n-runtime/run';
import { useRedis } from '../harness/redis';

const ERASED = '13712346001';
const KEPT = '13712346002';

const entryKeys = (prefix: string) => [`${prefix}|a`, `${prefix}|b`, `${prefix}|c`];

/** One entry about each number, and one about none; answers a reader of the three. */
async function writeBoth(store: DurableStore, prefix: string) {
	const keys = entryKeys(prefix);
	await store.update(keys, () => ({
		writes: [
			{ key: keys[0], value: 'about the erased number', phone: ERASED },
			{ key: keys[1], value: 'about the kept number', phone: KEPT },
			{ key: keys[2], value: 'about no number' },
		],
		result: undefined,
	}));
	return async () => await store.read(keys);
}

let redis: RunningRedis;
useRedis((started) => (redis = started));

const savedEnv = { ...process.env };
afterEach(() => {
	process.env = { ...savedEnv };
});

function useStoreFile(): string {
	const file = join(mkdtempSync(join(tmpdir(), 'dgw-erase-')), 'store.sqlite');
	process.env[STORE_FILE_VARIABLE] = file;
	delete process.env.EXECUTIONS_MODE;
	return file;
}

describe('the number to erase', () => {
	it('is read as the nodes keep it: +86, 0086, spaces and dashes dropped', () => {
		expect(['+86 137-1234-6001', '0086 13712346001', ' 137 1234 6001 ', ERASED].map(normalizedPhone)).toEqual([ERASED, ERASED, ERASED, ERASED]);
	});

	it('is refused, naming what to give, when it is no number the nodes take', () => {
		expect(() => normalizedPhone('1371234')).toThrow(/: give the number as the SMS or Telephone node was given it$/);
		expect(() => normalizedPhone('not a number')).toThrow(/give the number as the SMS or Telephone node was given it/);
	});
});

describe('erasePhone in one store', () => {
	it("in process memory: the number's entries go, the others stay, however the number is spelled", async () => {
		const store = new MemoryStore();
		const read = await writeBoth(store, 'memory');
		await expect(erasePhone(store, '+86 137 1234 6001')).resolves.toBe(1);
		expect(await read()).toEqual([undefined, 'about the kept number', 'about no number']);
		await expect(erasePhone(store, ERASED)).resolves.toBe(0);
	});

	it('in the SQLite file and in Redis alike', async () => {
		const sqlite = new SqliteDurableStore(nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>, useStoreFile());
		const connection = redisFor({ url: redis.url }, 'erase-unit');
		const redisStore = new RedisDurableStore(connection, 'the test Redis', () => 'check it');
		try {
			for (const store of [sqlite, redisStore] as DurableStore[]) {
				const read = await writeBoth(store, `one-store-${store.kind}`);
				await expect(erasePhone(store, ERASED)).resolves.toBe(1);
				expect(await read()).toEqual([undefined, 'about the kept number', 'about no number']);
			}
		} finally {
			sqlite.close();
			releaseRedis('erase-unit');
		}
	});

	it('refuses a store that cannot erase by number, naming it', async () => {
		const foreign = { label: 'a store of another kind' } as unknown as DurableStore;
		await expect(erasePhone(foreign, ERASED)).rejects.toThrow('a store of another kind cannot erase by phone number');
		await expect(erasePhone(foreign, 'bad')).rejects.toThrow(/give the number/);
	});
});

describe('erasePhoneEverywhere', () => {
	it('finds nothing to do without a store file, a queue Redis or a Redis given', async () => {
		useStoreFile();
		await expect(erasePhoneEverywhere(ERASED)).resolves.toEqual([]);
	});

	it("erases in this host's SQLite file, n8n's queue Redis in queue mode and each Redis given, in that order", async () => {
		const file = useStoreFile();
		const sqlite = new SqliteDurableStore(nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>, file);
		await writeBoth(sqlite, 'everywhere-file');
		sqlite.close();
		const connection = redisFor({ url: redis.url }, 'erase-writer');
		await writeBoth(new RedisDurableStore(connection, 'the test Redis', () => 'check it'), 'everywhere-redis');
		releaseRedis('erase-writer');
		Object.assign(process.env, { EXECUTIONS_MODE: 'queue', QUEUE_BULL_REDIS_HOST: '127.0.0.1', QUEUE_BULL_REDIS_PORT: String(redis.port) });
		try {
			const done = await erasePhoneEverywhere('+86 13712346001', [{ url: redis.url }]);
			expect(done).toEqual([
				{ store: expect.stringContaining(file), erased: 1 },
				{ store: `n8n's queue Redis at 127.0.0.1:${redis.port}`, erased: 1 },
				// The same Redis given again: what the queue Redis held is gone already.
				{ store: `the Redis given at 127.0.0.1:${redis.port}`, erased: 0 },
			]);
			// Each Redis connection is closed after its target: no client stays on the Redis.
			expect(connectedClients()).toBe(1);
			const reader = new RedisDurableStore(redisFor({ url: redis.url }, 'erase-reader'), 'the test Redis', () => 'check it');
			expect(await reader.read(entryKeys('everywhere-redis'))).toEqual([undefined, 'about the kept number', 'about no number']);
			const reopened = new SqliteDurableStore(nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>, file);
			try {
				expect(await reopened.read(entryKeys('everywhere-file'))).toEqual([undefined, 'about the kept number', 'about no number']);
			} finally {
				reopened.close();
			}
		} finally {
			releaseRedis('erase-reader');
		}
	});

	it('names what to check when a Redis given does not answer', async () => {
		useStoreFile();
		const nowhere = `redis://127.0.0.1:${await freePort()}`;
		await expect(erasePhoneEverywhere(ERASED, [{ url: nowhere }])).rejects.toThrow(/check its URL and password/);
	});
});

/** Clients connected to the test's Redis, the asking redis-cli included. */
function connectedClients(): number {
	const info = execFileSync('redis-cli', ['-p', String(redis.port), 'INFO', 'clients'], { encoding: 'utf8' });
	return Number(/connected_clients:(\d+)/.exec(info)?.[1]);
}
