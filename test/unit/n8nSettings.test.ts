/**
 * n8n's queue Redis settings read as n8n's config package reads them (@n8n/config 1.65 in n8n
 * 1.123, 2.39 in n8n 2.41): files beside variables, text, numbers and flags, and the connection
 * options n8n's Redis client takes from them. The expected values are what n8n makes of each input.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { n8nSetting, noEvictionConfirmed } from '../../nodes/shared/store/hostEnvironment';
import { queueRedisFrom, settingFlag, settingNumber, settingText } from '../../nodes/shared/store/redis/n8nSettings';
import { withEnvironment } from '../store/selection';

const from = (values: Record<string, string>) => queueRedisFrom((name) => values[name]);
const queue = (values: Record<string, string>) => from({ EXECUTIONS_MODE: 'queue', ...values });

describe("n8n's rules for one setting", () => {
	it('text: trimmed, one pair of matching quotes around the whole dropped', () => {
		expect(['  redis.local ', '"redis.local"', "'redis.local'", '"redis.local\'', '"', '""', ' "a" ', '"a\nb"'].map(settingText)).toEqual([
			'redis.local',
			'redis.local',
			'redis.local',
			'"redis.local\'',
			'"',
			'',
			'a',
			'"a\nb"',
		]);
	});

	it("numbers: JavaScript's Number(); blank or not a number keeps the default", () => {
		expect(['6380', ' 6380 ', '0x10', '1e3', '', '  ', '""', 'six', '63 80', undefined].map((raw) => settingNumber(raw, 6379))).toEqual([6380, 6380, 16, 1000, 6379, 6379, 6379, 6379, 6379, 6379]);
	});

	it('flags: true/1 and false/0 in any letter case; anything else (yes, on, spaces) keeps the default', () => {
		expect(['true', 'TRUE', 'True', '1', 'false', 'FALSE', '0', 'yes', 'on', ' true', '', undefined].map((raw) => settingFlag(raw, false))).toEqual([
			true,
			true,
			true,
			true,
			false,
			false,
			false,
			false,
			false,
			false,
			false,
			false,
		]);
		expect(['0', 'no', undefined].map((raw) => settingFlag(raw, true))).toEqual([false, true, true]);
	});
});

describe('a setting from its file (Docker secrets)', () => {
	let folder: string;
	let restore: () => void = () => undefined;
	beforeAll(() => {
		folder = mkdtempSync(join(tmpdir(), 'dgw-n8n-settings-'));
	});
	afterAll(() => rmSync(folder, { recursive: true, force: true }));
	afterEach(() => restore());

	it('the variable when set, even empty; else its _FILE, trimmed; else nothing', () => {
		const file = join(folder, 'secret');
		writeFileSync(file, '  s3cret with spaces inside \n\n');
		restore = withEnvironment({ QUEUE_BULL_REDIS_PASSWORD_FILE: file });
		expect(n8nSetting('QUEUE_BULL_REDIS_PASSWORD')).toBe('s3cret with spaces inside');
		restore();
		restore = withEnvironment({ QUEUE_BULL_REDIS_PASSWORD: '', QUEUE_BULL_REDIS_PASSWORD_FILE: file });
		expect(n8nSetting('QUEUE_BULL_REDIS_PASSWORD')).toBe('');
		restore();
		restore = withEnvironment({});
		expect(n8nSetting('QUEUE_BULL_REDIS_PASSWORD')).toBeUndefined();
	});

	it('a file that cannot be read makes the queue Redis unusable, naming the variable; DATA_GATEWAY_REDIS_NOEVICTION then confirms nothing', () => {
		const absent = join(folder, 'absent');
		restore = withEnvironment({ EXECUTIONS_MODE: 'queue', QUEUE_BULL_REDIS_TLS_FILE: absent, DATA_GATEWAY_REDIS_NOEVICTION_FILE: absent });
		const settings = queueRedisFrom(n8nSetting);
		expect(settings?.unusable?.field).toBe('QUEUE_BULL_REDIS_TLS_FILE');
		expect(settings?.unusable?.reason).toBe(`n8n's setting QUEUE_BULL_REDIS_TLS_FILE names ${absent}, which could not be read (ENOENT)`);
		expect(noEvictionConfirmed()).toBe(false);
	});

	it('DATA_GATEWAY_REDIS_NOEVICTION is a flag read by the same rules', () => {
		const file = join(folder, 'noeviction');
		writeFileSync(file, 'TRUE\n');
		restore = withEnvironment({ DATA_GATEWAY_REDIS_NOEVICTION_FILE: file });
		expect(noEvictionConfirmed()).toBe(true);
		restore();
		restore = withEnvironment({ DATA_GATEWAY_REDIS_NOEVICTION: 'yes' });
		expect(noEvictionConfirmed()).toBe(false);
	});
});

describe("the queue Redis from n8n's settings", () => {
	it('only in queue mode (EXECUTIONS_MODE, text rules), and not for a Redis Cluster with a node', () => {
		expect([from({}), from({ EXECUTIONS_MODE: 'regular' }), from({ EXECUTIONS_MODE: 'Queue' }), from({ EXECUTIONS_MODE: 'nonsense' })]).toEqual([undefined, undefined, undefined, undefined]);
		expect(from({ EXECUTIONS_MODE: ' "queue" ' })?.url).toBe('redis://localhost:6379/0');
		expect(queue({ QUEUE_BULL_REDIS_CLUSTER_NODES: 'redis-1:7000' })).toBeUndefined();
		expect(queue({ QUEUE_BULL_REDIS_CLUSTER_NODES: ' , ,' })?.url).toBe('redis://localhost:6379/0');
	});

	it("n8n's defaults: localhost:6379, database 0, no TLS, IPv4 only (n8n's ioredis 5.3 resolves IPv4 unless QUEUE_BULL_REDIS_DUALSTACK)", () => {
		expect(queue({})).toEqual({ url: 'redis://localhost:6379/0', family: 4 });
		expect(queue({ QUEUE_BULL_REDIS_HOST: '', QUEUE_BULL_REDIS_PORT: '', QUEUE_BULL_REDIS_DB: 'zero', QUEUE_BULL_REDIS_TLS: 'yes' })).toEqual({ url: 'redis://localhost:6379/0', family: 4 });
	});

	it('every setting n8n has for it: user, password, TLS with server name and certificate check, dual stack, keep-alive', () => {
		expect(
			queue({
				QUEUE_BULL_REDIS_HOST: "'redis.internal'",
				QUEUE_BULL_REDIS_PORT: '6380',
				QUEUE_BULL_REDIS_DB: '2',
				QUEUE_BULL_REDIS_USERNAME: ' n8n user ',
				QUEUE_BULL_REDIS_PASSWORD: '"p@ss:word"',
				QUEUE_BULL_REDIS_TLS: '1',
				QUEUE_BULL_REDIS_TLS_SERVERNAME: 'redis.example',
				QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE: 'False',
				QUEUE_BULL_REDIS_DUALSTACK: 'TRUE',
				QUEUE_BULL_REDIS_KEEP_ALIVE: 'true',
				QUEUE_BULL_REDIS_KEEP_ALIVE_DELAY: '12000',
			}),
		).toEqual({ url: 'rediss://n8n%20user@redis.internal:6380/2', password: 'p@ss:word', tlsServerName: 'redis.example', tlsRejectUnauthorized: false, family: 0, keepAliveMs: 12_000 });
		// TLS settings without TLS change nothing; the certificate is checked unless told otherwise.
		expect(queue({ QUEUE_BULL_REDIS_TLS_SERVERNAME: 'redis.example', QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE: 'false' })).toEqual({ url: 'redis://localhost:6379/0', family: 4 });
		expect(queue({ QUEUE_BULL_REDIS_TLS: 'true', QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE: 'maybe' })).toEqual({ url: 'rediss://localhost:6379/0', family: 4 });
		expect(queue({ QUEUE_BULL_REDIS_HOST: '::1' })?.url).toBe('redis://[::1]:6379/0');
	});

	it('a value no connection can use names its variable', () => {
		expect(queue({ QUEUE_BULL_REDIS_PORT: '70000' })?.unusable?.message).toBe('"QUEUE_BULL_REDIS_PORT": n8n\'s setting QUEUE_BULL_REDIS_PORT is 70000, not a port number');
		// Port 0 is no server's port (issue 41 item 9): refused, not handed to the socket.
		expect(queue({ QUEUE_BULL_REDIS_PORT: '0' })?.unusable?.message).toBe('"QUEUE_BULL_REDIS_PORT": n8n\'s setting QUEUE_BULL_REDIS_PORT is 0, not a port number');
		expect(queue({ QUEUE_BULL_REDIS_PORT: '1' })?.unusable).toBeUndefined();
		expect(queue({ QUEUE_BULL_REDIS_DB: '-1' })?.unusable?.field).toBe('QUEUE_BULL_REDIS_DB');
		expect(queue({ QUEUE_BULL_REDIS_HOST: 'evil.example/0?x=' })?.unusable?.field).toBe('QUEUE_BULL_REDIS_HOST');
	});
});
