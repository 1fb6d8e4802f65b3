/**
 * A Redis that may evict the store's keys, against a real redis-server and real workflows
 * (n8n-core) at the gateway emulator: SMS send records and per-number counts are refused there
 * before any paid call, with the setting and the fix named; lookups keep using it (an evicted
 * answer only costs a call) with a hint; a Redis without persistence is named in a hint. The
 * policy is asked on each connection and again each minute: each test closes the connections, as a restart would.
 */
import { execFileSync } from 'node:child_process';
import type { IDataObject } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { hostClock } from '../../nodes/shared/store/hostClock';
import { closeAllRedis, forgetOpenStores } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow, type WorkflowRunResult } from '../harness/workflow';

jest.setTimeout(120_000);

let emulator: Emulator;
useEmulator((started) => (emulator = started), { deliveryDelayMs: 60_000 }, { smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });

let redis: RunningRedis;
/** A Redis whose user may not run CONFIG (as on many managed Redis): the policy comes from INFO memory. */
let noConfig: RunningRedis;
beforeAll(async () => {
	[redis, noConfig] = await Promise.all([
		startRedis(() => undefined),
		startRedis(() => undefined, { extraArgs: ['--maxmemory-policy', 'volatile-lfu', '--user', 'default', 'off', '--user', 'app', 'on', '>app-secret-4', '~*', '&*', '+@all', '-config'] }),
	]);
});
afterAll(async () => {
	closeAllRedis();
	await Promise.all([redis?.stop(), noConfig?.stop()]);
});
afterEach(() => {
	closeAllRedis();
	forgetOpenStores();
	execFileSync('redis-cli', ['-p', String(redis.port), 'CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
});

function usePolicy(policy: string) {
	execFileSync('redis-cli', ['-p', String(redis.port), 'CONFIG', 'SET', 'maxmemory-policy', policy]);
}

const sms = new DataGatewaySms();
const sendCalls = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;
const hintsOf = (result: WorkflowRunResult, step: string) => (result.run.data.resultData.runData[step]?.[0]?.hints ?? []).map((hint) => hint.message);

let numbers = 0;
/** Two messages, to numbers no earlier test texted (a repeat within 10 minutes would be skipped). */
function sendTwo(credential: IDataObject) {
	const phone = () => `139${String(process.pid % 10_000).padStart(4, '0')}${String(++numbers).padStart(4, '0')}`;
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters: sendParameters(emulator, { sendOptions: { repeatWindowMinutes: 10 } }) }],
		items: [{ phone: phone() }, { phone: phone() }],
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...credential } },
	});
}

const FIX = /Set maxmemory-policy to noeviction on that Redis, or give the package a Redis of its own in the credential's "Shared Redis URL for Limits and Send Records"/;

describe('the opt-out list on Redis', () => {
	const optOut = (operation: string, phone: string, credential: IDataObject) =>
		runWorkflow({
			steps: [{ name: 'SMS', type: sms, parameters: { resource: 'optOut', operation, phone } }],
			items: [{}],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...credential } },
		});

	it('a Redis that may evict refuses the list: a vanished entry would text a person who said no', async () => {
		usePolicy('allkeys-lru');
		const result = await optOut('add', '13900009991', { sharedLimitRedisUrl: redis.url });
		expect(result.error?.message).toMatch(new RegExp(`^The opt-out list was not changed: the credential's Redis at 127\\.0\\.0\\.1:${redis.port} may evict keys \\(maxmemory-policy allkeys-lru\\)`));
		expect(result.error?.message).toMatch(FIX);
	});

	it('noeviction: a number added there is refused by a Send on the same Redis', async () => {
		const credential = { sharedLimitRedisUrl: redis.url };
		expect((await optOut('add', '13900009992', credential)).json('SMS')).toEqual([{ phone: '13900009992', optedOut: true, alreadyListed: false }]);
		const refused = await runWorkflow({
			steps: [{ name: 'SMS', type: sms, parameters: sendParameters(emulator) }],
			items: [{ phone: '13900009992' }],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...credential } },
		});
		// SMS 1.5 skips it with sent false (1.4 refused it: test/sms/guards.test.ts).
		expect(refused.json('SMS')).toEqual([expect.objectContaining({ phone: '13900009992', sent: false, optedOut: true })]);
		expect(sendCalls()).toBe(0);
		await optOut('remove', '13900009992', credential);
	});
});

describe('SMS send records on a Redis that may evict them', () => {
	it.each(['allkeys-lru', 'volatile-lru'])('maxmemory-policy %s: refused before any paid call, naming the setting and the fix', async (policy) => {
		usePolicy(policy);
		const result = await sendTwo({ sharedLimitRedisUrl: redis.url });
		expect(sendCalls()).toBe(0);
		expect(result.error?.message).toMatch(
			new RegExp(`^SMS not sent: the credential's Redis at 127\\.0\\.0\\.1:${redis.port} may evict keys \\(maxmemory-policy ${policy}\\): the SMS send records and per-number counts could vanish there`),
		);
		expect(result.error?.message).toMatch(FIX);
		expect(result.error?.description).toMatch(/^Nothing was sent/);
	});

	it('maxmemory-policy read from INFO memory where CONFIG is refused (volatile-lfu): refused the same', async () => {
		const result = await sendTwo({ sharedLimitRedisUrl: `redis://app@127.0.0.1:${noConfig.port}`, sharedLimitRedisPassword: 'app-secret-4' });
		expect(sendCalls()).toBe(0);
		expect(result.error?.message).toMatch(/may evict keys \(maxmemory-policy volatile-lfu\)/);
	});

	it('noeviction: sent, once per number, and the hint says the Redis keeps nothing on disk', async () => {
		const result = await sendTwo({ sharedLimitRedisUrl: redis.url });
		expect(result.error).toBeUndefined();
		expect(sendCalls()).toBe(2);
		expect(result.json('SMS').map((item) => item.sent === false)).toEqual([false, false]);
		// The test's Redis runs without AOF or RDB (scripts/n8n-runtime/queue.ts).
		expect(hintsOf(result, 'SMS')).toContainEqual(expect.stringMatching(/^the credential's Redis at 127\.0\.0\.1:\d+ keeps nothing on disk \(no AOF, no RDB snapshots\): a restart of that Redis forgets every record kept there\. A message sent within its repeat window could then be sent again/));
	});

	it.each([
		['RDB snapshots', ['save', '3600 1']],
		['AOF', ['appendonly', 'yes']],
	])('no hint about a restart where Redis keeps its keys on disk (%s)', async (_kind, setting) => {
		execFileSync('redis-cli', ['-p', String(redis.port), 'CONFIG', 'SET', ...setting]);
		try {
			const result = await sendTwo({ sharedLimitRedisUrl: redis.url });
			expect(result.error).toBeUndefined();
			expect(hintsOf(result, 'SMS').filter((hint) => hint.includes('Redis'))).toEqual([]);
		} finally {
			execFileSync('redis-cli', ['-p', String(redis.port), 'CONFIG', 'SET', setting[0], setting[0] === 'save' ? '' : 'no']);
		}
	});

	it('asks again on a new connection: a policy changed to allkeys-lru is seen after a reconnect', async () => {
		expect((await sendTwo({ sharedLimitRedisUrl: redis.url })).error).toBeUndefined();
		usePolicy('allkeys-lru');
		closeAllRedis();
		const refused = await sendTwo({ sharedLimitRedisUrl: redis.url });
		expect(refused.error?.message).toMatch(/may evict keys \(maxmemory-policy allkeys-lru\)/);
		expect(sendCalls()).toBe(2);
	});
});

describe('the policy re-checked while connected (issue 41 item 3)', () => {
	const realClock = hostClock.now;
	afterEach(() => (hostClock.now = realClock));

	it('a Redis switched to allkeys-lru on the same connection is no longer trusted once a minute has passed: nothing sent, nothing said to be kept', async () => {
		const start = Date.now();
		hostClock.now = () => start;
		expect((await sendTwo({ sharedLimitRedisUrl: redis.url })).error).toBeUndefined();
		usePolicy('allkeys-lru');
		hostClock.now = () => start + 61_000;
		const refused = await sendTwo({ sharedLimitRedisUrl: redis.url });
		expect(refused.error?.message).toMatch(/may evict keys \(maxmemory-policy allkeys-lru\)/);
		expect(refused.error?.description).not.toMatch(/may still be/);
		expect(sendCalls()).toBe(2);
	});
});

describe('lookups on a Redis that may evict keys', () => {
	const enterprise = new DataGatewayEnterprise();
	const lookup = () =>
		runWorkflow({
			steps: [{ name: 'Lookup', type: enterprise, parameters: { resource: 'registration', operation: 'get', keyword: '驱逐测试科技有限公司', options: { reuseAnswersHours: 24 } } }],
			items: [{}],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, sharedLimitRedisUrl: redis.url } },
		});

	it('allkeys-lru: Reuse Answers For still works, with a hint that kept answers may vanish early', async () => {
		usePolicy('allkeys-lru');
		const first = await lookup();
		const second = await lookup();
		expect([first.error, second.error]).toEqual([undefined, undefined]);
		expect(emulator.ledger().byPath['/enterprise/detail_info']?.calls).toBe(1);
		expect(second.json('Lookup')[0]).toMatchObject({ reused: true, costYuan: 0 });
		for (const result of [first, second]) {
			expect(hintsOf(result, 'Lookup')).toContainEqual(
				expect.stringMatching(
					/^the credential's Redis at 127\.0\.0\.1:\d+ may evict keys \(maxmemory-policy allkeys-lru\): answers kept for reuse, what Only New has seen and the telephone quota counts may vanish before their time \(a vanished answer is asked, and paid, again\)\./,
				),
			);
		}
	});
});
