/**
 * The Redis durable store (nodes/shared/store/redisStore.ts) against a real redis-server: the
 * store contract, keys kept as hashes, the compare-and-set retrying when another process changed
 * a key, two OS processes racing, and every failed or garbled reply a StoreUnavailable that names
 * the store.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';

import { StoreUnavailable, type DurableStore } from '../../nodes/shared/store/durableStore';
import { storedKeyName } from '../../nodes/shared/store/keyName';
import { parseRedisUrl, redisFor, redisTimeouts, SharedRedis } from '../../nodes/shared/store/redis/connection';
import { RedisDurableStore, redisStoreTries, type RedisCommands } from '../../nodes/shared/store/redisStore';
import { closeAllRedis } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { freshKey, increment, storeContract, unavailable } from './contract';
import { withEnvironment } from './selection';
import { raceTwoProcesses } from './processes';

jest.setTimeout(120_000);

let redis: RunningRedis;
let ownConnection: SharedRedis;
const servers: Server[] = [];
const defaults = { timeouts: { ...redisTimeouts }, tries: { ...redisStoreTries } };

const fix = () => 'fix it here';
const storeOn = (connection: RedisCommands, label = 'the test Redis') => new RedisDurableStore(connection, label, fix);

beforeAll(async () => {
	redis = await startRedis(() => undefined);
	ownConnection = new SharedRedis(parseRedisUrl(redis.url));
});
afterAll(async () => {
	closeAllRedis();
	ownConnection?.close();
	servers.forEach((server) => server.close());
	await redis?.stop();
});
afterEach(() => {
	Object.assign(redisTimeouts, defaults.timeouts);
	Object.assign(redisStoreTries, defaults.tries);
});

function cli(...args: string[]): string {
	return execFileSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' }).trim();
}

describe('Redis durable store: the contract', () => {
	storeContract({
		store: () => storeOn(redisFor({ url: redis.url }, 'contract')),
		other: () => storeOn(ownConnection),
	});
});

describe('Redis durable store', () => {
	it('keeps keys as hashes, with the lifetime asked for', async () => {
		const store = storeOn(redisFor({ url: redis.url }, 'names'));
		const key = `sms:13900001111:appcode-abc123:${freshKey('named')}`;
		await store.update([key], () => ({ writes: [{ key, value: 'kept' }], result: undefined }));
		const other = freshKey('timed');
		await store.update([other], () => ({ writes: [{ key: other, value: 'timed', ttlMs: 90_000 }], result: undefined }));
		const names = cli('--scan').split('\n');
		expect(names).toContain(storedKeyName(key));
		expect(names.join(' ')).not.toMatch(/13900001111|appcode|sms:/);
		expect(cli('GET', storedKeyName(key))).toBe('kept');
		expect(cli('PTTL', storedKeyName(key))).toBe('-1');
		const ttl = Number(cli('PTTL', storedKeyName(other)));
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(90_000);
	});

	it('decides again when another process changed a key between the read and the write, writing only the second decision', async () => {
		const key = freshKey('conflict');
		const partner = freshKey('partner');
		const connection = redisFor({ url: redis.url }, 'conflict');
		let scriptCalls = 0;
		const interfering: RedisCommands = {
			command: (name, args, options) => connection.command(name, args, options),
			runScript: async (script, keys, args, options) => {
				// Before the first write, another connection changes the key the update read.
				if (++scriptCalls === 1) await ownConnection.command('SET', [storedKeyName(key), 'from another process']);
				return await connection.runScript(script, keys, args, options);
			},
		};
		const seen: Array<Array<string | undefined>> = [];
		const result = await storeOn(interfering).update([key, partner], (values) => {
			seen.push(values);
			return { writes: [{ key, value: `after ${values[0] ?? 'nothing'}` }, { key: partner, value: `partner after ${values[0] ?? 'nothing'}` }], result: values[0] };
		});
		expect(seen).toEqual([
			[undefined, undefined],
			['from another process', undefined],
		]);
		expect(result).toBe('from another process');
		expect(await storeOn(connection).read([key, partner])).toEqual(['after from another process', 'partner after from another process']);
	});

	/** A connection that lists the commands sent through it (a script by its name). */
	function countingConnection(owner: string) {
		const connection = redisFor({ url: redis.url }, owner);
		const sent: string[] = [];
		const counting: RedisCommands = {
			command: (name, args, options) => (sent.push(name), connection.command(name, args, options)),
			runScript: (script, keys, args, options) => (sent.push('script'), connection.runScript(script, keys, args, options)),
		};
		return { sent, store: storeOn(counting) };
	}

	/** The store on a counting connection, after it has asked Redis about itself (once per connection). */
	async function askedAlready(owner: string) {
		const counting = countingConnection(owner);
		await counting.store.environment();
		counting.sent.length = 0;
		return counting;
	}

	it("decides on a right guess of the keys and the time, and writes in one round trip without reading", async () => {
		const [key, partner] = [freshKey('guessed'), freshKey('guessed partner')];
		await storeOn(ownConnection).update([key], () => ({ writes: [{ key, value: 'held' }], result: undefined }));
		const { sent, store } = await askedAlready('guess right');
		const seen: Array<[Array<string | undefined>, number]> = [];
		const result = await store.update(
			[key, partner],
			(values, now) => {
				seen.push([values, now]);
				return { writes: [{ key: partner, value: `next to ${values[0]}` }], result: 'written' };
			},
			{ values: ['held', undefined], now: 1_234 },
		);
		expect([result, seen, sent]).toEqual(['written', [[['held', undefined], 1_234]], ['script']]);
		expect(await store.read([key, partner])).toEqual(['held', 'next to held']);
	});

	it('reads and decides again, at Redis time, when a guess is stale: nothing of the guessed decision is written', async () => {
		const [key, partner] = [freshKey('stale'), freshKey('stale partner')];
		await storeOn(ownConnection).update([key], () => ({ writes: [{ key, value: 'changed by another process' }], result: undefined }));
		const { sent, store } = await askedAlready('guess stale');
		const seen: Array<Array<string | undefined>> = [];
		const result = await store.update(
			[key, partner],
			(values) => {
				seen.push(values);
				return { writes: [{ key: partner, value: `next to ${values[0]}` }], result: values[0] };
			},
			{ values: ['as this run left it', undefined], now: 1_234 },
		);
		expect(seen).toEqual([
			['as this run left it', undefined],
			['changed by another process', undefined],
		]);
		expect(result).toBe('changed by another process');
		expect(sent).toEqual(['script', 'TIME', 'MGET', 'script']);
		expect(await store.read([partner])).toEqual(['next to changed by another process']);
	});

	it('checks a guessed decision that writes nothing against the keys before answering it', async () => {
		const key = freshKey('guess without writes');
		await storeOn(ownConnection).update([key], () => ({ writes: [{ key, value: 'now' }], result: undefined }));
		const { store } = countingConnection('guess no writes');
		const answer = await store.update([key], (values) => ({ writes: [], result: values[0] }), { values: ['before'], now: 1 });
		expect(answer).toBe('now');
	});

	it('gives up with a StoreUnavailable, nothing written, when the keys keep changing', async () => {
		redisStoreTries.max = 3;
		const key = freshKey('churn');
		const connection = redisFor({ url: redis.url }, 'churn');
		let changes = 0;
		const churning: RedisCommands = {
			command: (name, args, options) => connection.command(name, args, options),
			runScript: async (script, keys, args, options) => {
				if (keys.includes(storedKeyName(key))) await ownConnection.command('SET', [storedKeyName(key), `change ${++changes}`]);
				return await connection.runScript(script, keys, args, options);
			},
		};
		let decisions = 0;
		const failure = await unavailable(storeOn(churning, 'the churned Redis').update([key], () => ({ writes: [{ key, value: `mine ${++decisions}` }], result: undefined })));
		expect(decisions).toBe(3);
		expect(failure.message).toMatch(/^the churned Redis: the keys of this update kept changing under other processes \(3 tries\); nothing was written/);
		expect(failure.maybeWritten).toBe(false);
		expect(cli('GET', storedKeyName(key))).toBe('change 3');
		// It took the turn at its third try, and gave it back when it gave up.
		expect(cli('EXISTS', 'dgw:~turn')).toBe('0');
	});

	it('takes the turn after two conflicts, so another process that keeps writing cannot starve an update', async () => {
		const key = freshKey('starved');
		const other = storeOn(redisFor({ url: redis.url }, 'starving'), 'the other process');
		const connection = redisFor({ url: redis.url }, 'starved');
		const refused: string[] = [];
		let changes = 0;
		// Before each of this update's scripts the other process writes the key through its own store:
		// once this update holds the turn, the other's write must wait (here it may not wait at all).
		const contended: RedisCommands = {
			command: (name, args, options) => connection.command(name, args, options),
			runScript: async (script, keys, args, options) => {
				if (keys.includes(storedKeyName(key))) {
					await other.update([key], () => ({ writes: [{ key, value: `other ${++changes}` }], result: undefined })).catch((error: Error) => refused.push(error.message));
				}
				return await connection.runScript(script, keys, args, options);
			},
		};
		redisStoreTries.waits = 0;
		let decisions = 0;
		await storeOn(contended).update([key], (values) => ({ writes: [{ key, value: `mine ${++decisions} after ${values[0]}` }], result: undefined }));
		// Its third try took the turn (and met the other's third write); the other's fourth had to wait.
		expect(decisions).toBe(4);
		expect(changes).toBe(4);
		expect(refused).toEqual(['the other process: other processes kept their turn at its keys for 0 waits; nothing was written, try again']);
		expect(cli('GET', storedKeyName(key))).toBe('mine 4 after other 3');
		expect(cli('EXISTS', 'dgw:~turn')).toBe('0');
	});

	it('loses no increment when two OS processes race on one counter', async () => {
		const key = freshKey('processes');
		const written = await raceTwoProcesses('redis', redis.url, key, 150);
		expect(written.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, index) => index + 1));
		expect(await storeOn(ownConnection).read([key])).toEqual(['300']);
	});

	it('fails with a StoreUnavailable, writing nothing, when Redis refuses the write (out of memory)', async () => {
		const key = freshKey('oom');
		const store = storeOn(redisFor({ url: redis.url }, 'oom'), "the credential's Redis at the test port");
		cli('CONFIG', 'SET', 'maxmemory', '1');
		let failure: StoreUnavailable;
		try {
			failure = await unavailable(store.update([key], () => ({ writes: [{ key, value: 'x' }], result: undefined })));
		} finally {
			cli('CONFIG', 'SET', 'maxmemory', '0');
		}
		expect(failure.message).toMatch(/^the credential's Redis at the test port could not be used for the compare-and-set script: .*OOM command not allowed.*\(fix it here\)$/);
		expect(failure.maybeWritten).toBe(false);
		expect(failure.store).toBe("the credential's Redis at the test port");
		expect(await store.read([key])).toEqual([undefined]);
	});

	it('fails with a StoreUnavailable naming the store when nothing answers', async () => {
		const closed = await closedPort();
		const store = storeOn(redisFor({ url: `redis://127.0.0.1:${closed}` }, 'refused'), `Redis at 127.0.0.1:${closed}`);
		// Each call made only when awaited, so that no rejection waits unhandled while another is awaited.
		for (const call of [async () => await store.now(), async () => await store.read(['a']), async () => await store.update(['a'], () => ({ writes: [], result: 1 }))]) {
			const failure = await unavailable(call());
			expect(failure.message).toMatch(new RegExp(`^Redis at 127\\.0\\.0\\.1:${closed} could not be used for (TIME|the eviction check): nothing answers .*ECONNREFUSED.*\\(fix it here\\)$`));
		}
	});

	describe('a server that answers what Redis would not', () => {
		const TIME = '*2\r\n$10\r\n1800000000\r\n$6\r\n123456\r\n';
		const ONE_NULL = '*1\r\n$-1\r\n';
		// A key's name and its name of earlier versions (keyName.ts legacyKeyName), both absent, and no key check yet.
		const KEY_ABSENT = '*3\r\n$-1\r\n$-1\r\n$-1\r\n';
		const cases: Array<{ name: string; replies: Record<string, string>; call: (store: DurableStore) => Promise<unknown>; message: RegExp; maybeWritten?: boolean }> = [
			{ name: 'TIME as a number', replies: { TIME: ':7\r\n' }, call: (store) => store.now(), message: /answered number 7 to TIME/ },
			{ name: 'TIME with letters', replies: { TIME: '*2\r\n$3\r\nabc\r\n$1\r\n0\r\n' }, call: (store) => store.now(), message: /answered a list of 2 to TIME/ },
			{ name: 'MGET with too few values', replies: { MGET: ONE_NULL }, call: (store) => store.read(['a', 'b']), message: /answered a list of 1 to MGET/ },
			{ name: 'MGET as a status', replies: { MGET: '+OK\r\n' }, call: (store) => store.read(['a']), message: /answered string "OK" to MGET/ },
			{
				name: 'the script answering 3',
				replies: { TIME, MGET: KEY_ABSENT, EVALSHA: ':3\r\n' },
				call: (store) => store.update(['a'], () => ({ writes: [{ key: 'a', value: 'x' }], result: 1 })),
				message: /answered number 3 to the compare-and-set script, which this store does not expect; its writes may or may not have been applied/,
				maybeWritten: true,
			},
			{
				name: 'the script answering a list',
				replies: { TIME, MGET: KEY_ABSENT, EVALSHA: '*1\r\n:1\r\n' },
				call: (store) => store.update(['a'], () => ({ writes: [{ key: 'a', value: 'x' }], result: 1 })),
				message: /answered a list of 1 to the compare-and-set script/,
				maybeWritten: true,
			},
			{
				name: 'no answer to the script',
				replies: { TIME, MGET: KEY_ABSENT, EVALSHA: '' },
				call: (store) => store.update(['a'], () => ({ writes: [{ key: 'a', value: 'x' }], result: 1 })),
				message: /could not be used for the compare-and-set script: no answer from Redis at 127\.0\.0\.1:\d+ within 0\.3 s \(fix it here\)$/,
				maybeWritten: true,
			},
			{
				name: 'the script refused',
				replies: { TIME, MGET: KEY_ABSENT, EVALSHA: "-BUSY Redis is busy running a script\r\n" },
				call: (store) => store.update(['a'], () => ({ writes: [{ key: 'a', value: 'x' }], result: 1 })),
				message: /could not be used for the compare-and-set script: Redis at 127\.0\.0\.1:\d+ refused the command \(BUSY Redis is busy running a script\)/,
			},
			{ name: 'bytes that are not Redis at all', replies: { TIME: 'HTTP/1.1 400 Bad Request\r\n\r\n' }, call: (store) => store.now(), message: /could not be used for TIME: the connection to Redis at 127\.0\.0\.1:\d+ was lost/ },
		];
		it.each(cases)('$name is a StoreUnavailable naming the store', async ({ replies, call, message, maybeWritten }) => {
			redisTimeouts.commandMs = 300;
			const url = await fakeRedis(replies);
			const failure = await unavailable(call(storeOn(redisFor({ url }, `fake:${url}`), 'the fake Redis')));
			expect(failure.message).toMatch(/^the fake Redis /);
			expect(failure.message).toMatch(message);
			expect(failure.maybeWritten).toBe(maybeWritten ?? false);
		});
	});

	describe('a Redis that will not say whether it evicts keys (CONFIG refused, no maxmemory_policy in INFO)', () => {
		const replies = { TIME: '*2\r\n$10\r\n1800000000\r\n$6\r\n123456\r\n', MGET: '*3\r\n$-1\r\n$-1\r\n$-1\r\n', EVALSHA: ':1\r\n' };
		const silentStore = async () => {
			const url = await fakeRedis(replies, 'redis_version:7.0.0\r\nloading:0');
			return storeOn(redisFor({ url }, `silent:${url}`), 'the silent Redis');
		};
		const write = (store: RedisDurableStore, key: string) => store.update([key], () => ({ writes: [{ key, value: 'x', ttlMs: 60_000 }], result: 'written' }));
		let restore: () => void = () => undefined;
		afterEach(() => restore());

		it('refuses keys that must not vanish (send records), naming DATA_GATEWAY_REDIS_NOEVICTION and what Redis refused', async () => {
			restore = withEnvironment({});
			const failure = await unavailable(write(await silentStore(), freshKey('record')));
			expect(failure.message).toBe(
				"the silent Redis would not say whether it evicts keys (CONFIG GET maxmemory-policy: ERR unknown command 'CONFIG'; CONFIG GET save: ERR unknown command 'CONFIG'): " +
					'the SMS send records and per-number counts could vanish there before their time, and a message already sent could then be sent again if it does. ' +
					"Set maxmemory-policy to noeviction on that Redis and then DATA_GATEWAY_REDIS_NOEVICTION=true in n8n's environment, or give the package a Redis of its own in the credential's \"Shared Redis URL for Limits and Send Records\" (a Redis you run keeps the default, noeviction)",
			);
			expect(failure.maybeWritten).toBe(false);
		});

		it('keeps answers for reuse there, with a hint that they may vanish early', async () => {
			restore = withEnvironment({});
			const store = await silentStore();
			expect(await write(store, 'lookup-answer|a question')).toBe('written');
			expect(store.notices()).toEqual([
				'the silent Redis would not say whether it evicts keys: answers kept for reuse, what Only New has seen and the telephone quota counts may vanish before their time (a vanished answer is asked, and paid, again) if it does.',
			]);
		});

		it('keeps send records there once the operator says it does not evict (DATA_GATEWAY_REDIS_NOEVICTION=true); no hint then', async () => {
			restore = withEnvironment({ DATA_GATEWAY_REDIS_NOEVICTION: 'true' });
			const store = await silentStore();
			expect(await write(store, freshKey('record'))).toBe('written');
			expect(store.notices()).toEqual([]);
		});
	});

	it('still counts right after those failures, on the real server', async () => {
		const key = freshKey('after');
		const store = storeOn(redisFor({ url: redis.url }, 'after'));
		expect(await increment(store, key)).toBe(1);
		expect(await increment(store, key)).toBe(2);
	});
});

async function closedPort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	const { port } = server.address() as AddressInfo;
	await new Promise((done) => server.close(done));
	return port;
}

const INFO = 'redis_version:7.0.0\r\nloading:0\r\nmaxmemory_policy:noeviction';

/** A TCP server that answers Redis's ready check and the store's eviction check (INFO) as Redis would, and other commands from `replies` (an error otherwise). */
async function fakeRedis(replies: Record<string, string>, info = INFO): Promise<string> {
	const server = createServer((socket) => {
		socket.on('error', () => undefined);
		socket.on('data', (chunk) => {
			const commands = chunk.toString('latin1').match(/\*\d+\r\n\$\d+\r\n[A-Za-z]+/g) ?? [];
			const answer = commands
				.map((command) => {
					const name = command.split('\r\n')[2].toUpperCase();
					if (name === 'INFO') return `$${info.length}\r\n${info}\r\n`;
					return replies[name] ?? `-ERR unknown command '${name}'\r\n`;
				})
				.join('');
			if (!socket.destroyed) socket.write(answer);
		});
	});
	servers.push(server);
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	return `redis://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
