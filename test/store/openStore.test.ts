/**
 * openDurableStore's choice: the credential's Redis, else n8n's queue Redis in queue mode
 * (QUEUE_BULL_REDIS_*), else the SQLite file in n8n's user folder, else (a Node without
 * node:sqlite, as n8n 1.x on Node 20) this process's memory, which the node's hint then names.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeExecutionHint } from 'n8n-workflow';

import { StoreUnavailable } from '../../nodes/shared/store/durableStore';
import { storedKeyName } from '../../nodes/shared/store/keyName';
import { openDurableStore, storeFallbackNotice } from '../../nodes/shared/store/openStore';
import { queueRedisSettings } from '../../nodes/shared/store/hostEnvironment';
import { parseRedisUrl } from '../../nodes/shared/store/redis/connection';
import { closeAllRedis, forgetOpenStores } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { freshKey, increment } from './contract';
import { nodeContext, webhookContext, withEnvironment } from './selection';

jest.setTimeout(120_000);

let queueRedis: RunningRedis;
let credentialRedis: RunningRedis;
let restore: () => void = () => undefined;

beforeAll(async () => {
	[queueRedis, credentialRedis] = await Promise.all([startRedis(() => undefined, { password: 'queue-secret-9' }), startRedis(() => undefined)]);
});
afterAll(async () => {
	closeAllRedis();
	await Promise.all([queueRedis?.stop(), credentialRedis?.stop()]);
});
afterEach(() => {
	restore();
	forgetOpenStores();
});

function keysIn(redis: RunningRedis, database: number, password?: string): string[] {
	const auth = password ? ['-a', password, '--no-auth-warning'] : [];
	return execFileSync('redis-cli', ['-p', String(redis.port), ...auth, '-n', String(database), '--scan'], { encoding: 'utf8' }).trim().split('\n');
}

const queueMode = (extra: Record<string, string> = {}) => ({
	EXECUTIONS_MODE: 'queue',
	QUEUE_BULL_REDIS_HOST: '127.0.0.1',
	QUEUE_BULL_REDIS_PORT: String(queueRedis.port),
	QUEUE_BULL_REDIS_DB: '3',
	QUEUE_BULL_REDIS_PASSWORD: 'queue-secret-9',
	...extra,
});

describe('openDurableStore', () => {
	it("picks the credential's Redis first, even in queue mode, one store per target", async () => {
		restore = withEnvironment(queueMode());
		const context = nodeContext({ sharedLimitRedisUrl: `${credentialRedis.url}/2` });
		const store = await openDurableStore(context);
		expect(store.kind).toBe('redis');
		expect(store.label).toBe(`the credential's Redis at 127.0.0.1:${credentialRedis.port}/2`);
		expect(await openDurableStore(context)).toBe(store);
		const key = freshKey('credential');
		expect(await increment(store, key)).toBe(1);
		expect(keysIn(credentialRedis, 2)).toContain(storedKeyName(key));
		// The test's Redis runs without AOF or RDB snapshots (scripts/n8n-runtime/queue.ts).
		expect(storeFallbackNotice(store)).toMatch(/^the credential's Redis at 127\.0\.0\.1:\d+\/2 keeps nothing on disk \(no AOF, no RDB snapshots\)/);
	});

	it("skips the credential's Redis when asked to, for records a node without the credential (the trigger) reads", async () => {
		restore = withEnvironment(queueMode());
		const context = nodeContext({ sharedLimitRedisUrl: credentialRedis.url });
		const forTrigger = await openDurableStore(context, { withoutCredential: true });
		expect(forTrigger.label).toBe(`n8n's queue Redis at 127.0.0.1:${queueRedis.port}/3`);
		expect(forTrigger).toBe(await openDurableStore(webhookContext()));
		expect((await openDurableStore(context)).label).toBe(`the credential's Redis at 127.0.0.1:${credentialRedis.port}`);
	});

	it("picks n8n's queue Redis in queue mode, with n8n's database and password, for a node and for a trigger", async () => {
		restore = withEnvironment(queueMode());
		const store = await openDurableStore(nodeContext({ sharedLimitRedisUrl: '' }));
		expect(store.kind).toBe('redis');
		expect(store.label).toBe(`n8n's queue Redis at 127.0.0.1:${queueRedis.port}/3`);
		expect(await openDurableStore(webhookContext())).toBe(store);
		const key = freshKey('queue');
		expect(await increment(store, key)).toBe(1);
		expect(keysIn(queueRedis, 3, 'queue-secret-9')).toContain(storedKeyName(key));
	});

	it("names n8n's QUEUE_BULL_REDIS_* settings, never the password, when the queue Redis refuses the login", async () => {
		restore = withEnvironment(queueMode({ QUEUE_BULL_REDIS_PASSWORD: 'not-the-queue-password' }));
		const store = await openDurableStore(webhookContext());
		const failure = await increment(store, freshKey('refused')).then(
			() => undefined,
			(error: unknown) => error,
		);
		expect(failure).toBeInstanceOf(StoreUnavailable);
		const message = (failure as StoreUnavailable).message;
		expect(message).toMatch(new RegExp(`^n8n's queue Redis at 127\\.0\\.0\\.1:${queueRedis.port}/3 could not be used for the eviction check: Redis at .* refused the login .*\\(check n8n's QUEUE_BULL_REDIS_\\* settings\\)$`));
		expect(message).not.toContain('not-the-queue-password');
	});

	it("reads n8n's queue settings as n8n does: defaults, TLS, a user name, an IPv6 host", () => {
		restore = withEnvironment({ EXECUTIONS_MODE: 'queue' });
		expect(queueRedisSettings()).toEqual({ url: 'redis://localhost:6379/0', family: 4 });
		restore();
		restore = withEnvironment({ EXECUTIONS_MODE: 'queue', QUEUE_BULL_REDIS_HOST: '::1', QUEUE_BULL_REDIS_PORT: '6380', QUEUE_BULL_REDIS_DB: '4', QUEUE_BULL_REDIS_USERNAME: 'n8n user', QUEUE_BULL_REDIS_PASSWORD: 'p@ss:word', QUEUE_BULL_REDIS_TLS: 'true' });
		expect(queueRedisSettings()).toEqual({ url: 'rediss://n8n%20user@[::1]:6380/4', password: 'p@ss:word', family: 4 });
		expect(parseRedisUrl(queueRedisSettings()?.url ?? '')).toEqual({ host: '::1', port: 6380, tls: true, username: 'n8n user', password: undefined, database: 4 });
	});

	it('does not use a queue-mode Redis Cluster, nor the queue Redis outside queue mode', async () => {
		restore = withEnvironment(queueMode({ QUEUE_BULL_REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001' }));
		expect((await openDurableStore(webhookContext())).kind).not.toBe('redis');
		restore();
		restore = withEnvironment({ ...queueMode(), EXECUTIONS_MODE: 'regular' });
		expect((await openDurableStore(webhookContext())).kind).not.toBe('redis');
	});

	it("picks the SQLite file in n8n's user folder without Redis, for a node and for a trigger, one store per file", async () => {
		const userFolder = mkdtempSync(join(tmpdir(), 'dgw-user-folder-'));
		try {
			restore = withEnvironment({ N8N_USER_FOLDER: userFolder });
			const store = await openDurableStore(nodeContext({ sharedLimitRedisUrl: '' }));
			const file = join(userFolder, '.n8n', 'data-gateway-store.sqlite');
			expect(store.kind).toBe('sqlite');
			expect(store.label).toBe(`the SQLite file ${file}`);
			expect(await openDurableStore(webhookContext())).toBe(store);
			expect(await increment(store, freshKey('sqlite'))).toBe(1);
			expect(existsSync(file)).toBe(true);
			expect(storeFallbackNotice(store)).toBeUndefined();

			restore();
			const elsewhere = join(userFolder, 'elsewhere', 'store.sqlite');
			restore = withEnvironment({ N8N_USER_FOLDER: userFolder, DATA_GATEWAY_STORE_FILE: elsewhere });
			const moved = await openDurableStore(webhookContext());
			expect(moved.label).toBe(`the SQLite file ${elsewhere}`);
			expect(await increment(moved, freshKey('moved'))).toBe(1);
			expect(existsSync(elsewhere)).toBe(true);
		} finally {
			forgetOpenStores();
			rmSync(userFolder, { recursive: true, force: true });
		}
	});

	it("falls back to this process's memory on a Node without node:sqlite, and the node's hint says so", async () => {
		const probe = join(__dirname, 'fallbackProbe.ts');
		const output = execFileSync(process.execPath, ['--no-experimental-sqlite', '--import', 'tsx', probe], {
			cwd: join(__dirname, '..', '..'),
			encoding: 'utf8',
			env: { ...process.env, EXECUTIONS_MODE: 'regular' },
		});
		const seen = JSON.parse(output) as { kind: string; label: string; sameForTrigger: boolean; counted: number[]; notice: string; hints: NodeExecutionHint[] };
		expect(seen).toMatchObject({ kind: 'memory', label: "this n8n process's memory", sameForTrigger: true, counted: [1, 2] });
		expect(seen.notice).toMatch(
			/^What this node keeps between executions \(send records, answers kept for reuse\) is in this n8n process's memory only: a restart of n8n forgets it, and other n8n processes do not see it; so the opt-out list and the daily and monthly budgets are refused here\. This Node \(v[\d.]+\) has no node:sqlite for a store file; run n8n on Node 22\.13 or later \(as n8n 2\.x does\), or set "Shared Redis URL for Limits and Send Records" in the credential\.$/,
		);
		expect(seen.hints).toEqual([{ type: 'warning', location: 'outputPane', message: seen.notice }]);
	});
});
