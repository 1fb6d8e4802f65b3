/**
 * The shared Redis connection (store/redis/connection.ts) against real redis-servers (Debian's, installed by the
 * helper when missing): TLS with a certificate made here by openssl, ACL user and password,
 * database index, one connection per process and URL, and closing when a credential changes.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

import {
	parseRedisUrl,
	redisFor,
	redisSettingsFromCredentials,
	RedisScript,
	RedisUnavailable,
	releaseRedis,
} from '../../nodes/shared/store/redis/connection';
import { closeAllRedis, openRedisCount } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { makeSelfSignedCertificate } from '../harness/tlsCertificate';

jest.setTimeout(180_000);

let plain: RunningRedis;
let tlsRedis: RunningRedis;
let aclRedis: RunningRedis;
let certDir: string;
let caPem: string;

beforeAll(async () => {
	const { dir, certFile, keyFile, pem } = makeSelfSignedCertificate();
	certDir = dir;
	caPem = pem;
	[plain, tlsRedis, aclRedis] = await Promise.all([
		startRedis(() => undefined),
		startRedis(() => undefined, { tls: { certFile, keyFile }, password: 'tls-secret-7' }),
		startRedis(() => undefined, { extraArgs: ['--user', 'default', 'off', '--user', 'alice', 'on', '>alice-secret-3', '~*', '&*', '+@all'] }),
	]);
});
afterAll(async () => {
	closeAllRedis();
	await Promise.all([plain?.stop(), tlsRedis?.stop(), aclRedis?.stop()]);
	rmSync(certDir, { recursive: true, force: true });
});

async function failureOf(promise: Promise<unknown>): Promise<RedisUnavailable> {
	const error = await promise.then(
		() => undefined,
		(caught: unknown) => caught,
	);
	if (!(error instanceof RedisUnavailable)) throw new Error(`expected a RedisUnavailable, got ${String(error)}`);
	return error;
}

/** How many clients the server has, asked on a connection of its own (which counts itself). */
function clientCount(redis: RunningRedis): number {
	const list = execFileSync('redis-cli', ['-p', String(redis.port), 'CLIENT', 'LIST'], { encoding: 'utf8' });
	return list.trim().split('\n').length - 1;
}

const INCR_AND_READ = new RedisScript("return {redis.call('INCR', KEYS[1]), ARGV[1]}", 1);

describe('shared Redis connection', () => {
	it('runs a script by SHA, loading it once, and a plain command', async () => {
		const redis = redisFor({ url: plain.url }, 'owner-script');
		expect(await redis.runScript(INCR_AND_READ, ['test:script'], ['x'])).toEqual([1, 'x']);
		expect(await redis.runScript(INCR_AND_READ, ['test:script'], ['y'])).toEqual([2, 'y']);
		expect(await redis.command('SET', ['test:nx', 'a', 'NX', 'PX', 60_000])).toBe('OK');
		expect(await redis.command('SET', ['test:nx', 'b', 'NX', 'PX', 60_000])).toBeNull();
		const loaded = execFileSync('redis-cli', ['-p', String(plain.port), 'SCRIPT', 'EXISTS', INCR_AND_READ.sha], { encoding: 'utf8' });
		expect(loaded.trim()).toBe('1');
	});

	it('uses the database named in the URL path', async () => {
		await redisFor({ url: `${plain.url}/5` }, 'owner-db').command('SET', ['test:db', 'in-5']);
		const read = (db: string) => execFileSync('redis-cli', ['-p', String(plain.port), '-n', db, 'GET', 'test:db'], { encoding: 'utf8' }).trim();
		expect(read('5')).toBe('in-5');
		expect(read('0')).toBe('');
	});

	it('logs in as the URL user with the credential password, or with the password in the URL', async () => {
		const host = `127.0.0.1:${aclRedis.port}`;
		expect(await redisFor({ url: `redis://alice@${host}`, password: 'alice-secret-3' }, 'owner-acl-1').command('PING', [])).toBe('PONG');
		expect(await redisFor({ url: `redis://alice:alice-secret-3@${host}` }, 'owner-acl-2').command('PING', [])).toBe('PONG');
		const refused = await failureOf(redisFor({ url: `redis://alice@${host}`, password: 'not-alices' }, 'owner-acl-3').command('PING', []));
		expect(refused.message).toMatch(/^"Shared Redis Password": Redis at 127\.0\.0\.1:\d+ refused the login/);
		expect(refused.message).not.toContain('not-alices');
	});

	it('speaks TLS to a rediss:// URL whose self-signed certificate is given as the CA', async () => {
		const host = `localhost:${tlsRedis.port}`;
		const byName = redisFor({ url: `rediss://${host}/2`, password: 'tls-secret-7', tlsCa: caPem }, 'owner-tls-1');
		expect(await byName.command('SET', ['test:tls', 'over-tls'])).toBe('OK');
		expect(await byName.command('GET', ['test:tls'])).toBe('over-tls');
		const byAddress = redisFor({ url: tlsRedis.url, password: 'tls-secret-7', tlsCa: caPem }, 'owner-tls-2');
		expect(await byAddress.command('PING', [])).toBe('PONG');
	});

	it('names the CA field when the TLS certificate is not trusted', async () => {
		const failure = await failureOf(redisFor({ url: `rediss://localhost:${tlsRedis.port}`, password: 'tls-secret-7' }, 'owner-tls-3').command('PING', []));
		expect(failure.field).toBe('Shared Redis CA Certificate');
		expect(failure.message).toMatch(/TLS certificate of localhost:\d+ was not accepted/);
	});

	it('keeps one connection per process and URL, and closes it when the credential changes its Redis', async () => {
		const before = clientCount(plain);
		const first = redisFor({ url: plain.url }, 'owner-reuse-a');
		const second = redisFor({ url: plain.url }, 'owner-reuse-b');
		expect(second).toBe(first);
		await Promise.all([first.command('PING', []), second.command('PING', []), first.command('PING', [])]);
		// owner-script opened one to this server already; owner-db's /5 is another URL.
		expect(clientCount(plain)).toBe(before);

		const counted = openRedisCount();
		const moved = redisFor({ url: `${plain.url}/7` }, 'owner-moves');
		await moved.command('PING', []);
		expect(openRedisCount()).toBe(counted + 1);
		// The credential now names another database: its old connection has no other user and closes.
		await redisFor({ url: `${plain.url}/8` }, 'owner-moves').command('PING', []);
		expect(openRedisCount()).toBe(counted + 1);
		releaseRedis('owner-moves');
		expect(openRedisCount()).toBe(counted);
		// A connection still used by another credential stays open.
		releaseRedis('owner-reuse-a');
		expect(await redisFor({ url: plain.url }, 'owner-reuse-b').command('PING', [])).toBe('PONG');
	});

	it('opens a new connection on the next call after Redis dropped it', async () => {
		const redis = redisFor({ url: plain.url }, 'owner-drop');
		await redis.command('CLIENT', ['SETNAME', 'dropped-one']);
		execFileSync('redis-cli', ['-p', String(plain.port), 'CLIENT', 'KILL', 'SKIPME', 'yes', 'TYPE', 'normal'], { encoding: 'utf8' });
		// A call made before this process has seen the close fails, saying so; the next one reconnects.
		const first = await redis.command('PING', []).catch((error: Error) => error.message);
		if (first !== 'PONG') expect(first).toMatch(/^"Shared Redis URL for Limits and Send Records": the connection to Redis at 127\.0\.0\.1:\d+ was lost/);
		expect(await redis.command('PING', [])).toBe('PONG');
	});

	it('after a READONLY refusal (a replica, as after a failover) the next call opens a new connection', async () => {
		const replica = await startRedis(() => undefined, { extraArgs: ['--replicaof', '127.0.0.1', String(plain.port)] });
		try {
			const redis = redisFor({ url: replica.url }, 'owner-replica');
			const refused = await failureOf(redis.command('SET', ['test:replica', 'x']));
			expect(refused.refusal).toMatch(/^READONLY /);
			expect(refused.message).toMatch(/refused the command \(READONLY/);
			expect(redis.connectionCount).toBe(1);
			expect(await redis.command('PING', [])).toBe('PONG');
			expect(redis.connectionCount).toBe(2);
		} finally {
			releaseRedis('owner-replica');
			await replica.stop();
		}
	});

	it('reads the credential fields, and names the URL field for URLs it cannot use', () => {
		expect(redisSettingsFromCredentials({ sharedLimitRedisUrl: '  ' })).toBeUndefined();
		expect(redisSettingsFromCredentials({ sharedLimitRedisUrl: ' rediss://h:6380/1 ', sharedLimitRedisPassword: 'p', sharedLimitRedisCa: '' })).toEqual({
			url: 'rediss://h:6380/1',
			password: 'p',
		});
		expect(parseRedisUrl('redis://:s%40cret@10.0.0.5:6380/2')).toEqual({ host: '10.0.0.5', port: 6380, tls: false, username: undefined, password: 's@cret', database: 2 });
		expect(parseRedisUrl('rediss://bob@[::1]')).toEqual({ host: '::1', port: 6379, tls: true, username: 'bob', password: undefined, database: 0 });
		expect(() => parseRedisUrl('http://host')).toThrow(/^"Shared Redis URL for Limits and Send Records": must start with redis:\/\/ or rediss:\/\//);
		expect(() => parseRedisUrl('not a url')).toThrow(/^"Shared Redis URL for Limits and Send Records": not a URL/);
		expect(() => parseRedisUrl('redis://host/x')).toThrow(/database number/);
	});
});
