/**
 * Scenario 9 of `npm run test:e2e:queue`, in the first cluster: a credential whose Shared Redis URL
 * names a Redis with maxmemory-policy allkeys-lru, which may evict the SMS send records and
 * per-number counts (a message already sent could go out again). The SMS node sends nothing: the
 * execution fails with an error naming the policy and the fix (noeviction), and the gateway sees
 * no send at all.
 */
import assert from 'node:assert/strict';

import type { Log } from '../../scripts/n8n-runtime';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import type { Emulator } from '../emulator/server';
import { until, type QueueHarness } from './queueCluster';
import { log, postJson } from './queueScenarios';
import { gatewayCredential, GATEWAY_CAP_PER_SECOND, smsWorkflow } from './queueWorkflows';

export const EVICTING_CREDENTIAL_ID = 'dgwQueueEvictingRedis';
export const EVICTING_SMS = { id: 'dgwQueueEvictingSms', path: 'dgw-evicting-sms' };

/** A Redis as several managed offerings run it: a memory limit, and any key may be evicted under it. */
export async function startEvictingRedis(logTo: Log): Promise<RunningRedis> {
	return await startRedis(logTo, { extraArgs: ['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru'] });
}

export function evictingCredential(emulator: Emulator, evicting: RunningRedis) {
	return gatewayCredential({ id: EVICTING_CREDENTIAL_ID, gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND, sharedLimitRedisUrl: evicting.url });
}

export function evictingSmsWorkflow(emulator: Emulator) {
	return smsWorkflow(EVICTING_SMS.id, EVICTING_SMS.path, Number(emulator.demo.signatureId), Number(emulator.demo.templateWithoutVariablesId), EVICTING_CREDENTIAL_ID);
}

export async function smsRefusedOnEvictingRedis(harness: QueueHarness, emulator: Emulator) {
	const { webhook, main } = harness.cluster;
	emulator.resetLedger();
	const answer = await postJson(`${webhook.url}/webhook/${EVICTING_SMS.path}`, { phones: [{ phone: '13755000001' }, { phone: '13755000002' }] });
	assert.equal(answer.status, 200, `the SMS workflow started: ${JSON.stringify(answer.body)}`);
	const [execution] = await until(async () => {
		const list = await harness.executions(EVICTING_SMS.id);
		return list.length === 1 && !['running', 'new', 'waiting'].includes(list[0].status) && list;
	}, 'the SMS execution on the evicting Redis to end');
	assert.equal(execution.status, 'error', `the SMS execution failed: ${JSON.stringify(execution)}`);
	const detail = await fetch(`${main.url}/rest/executions/${execution.id}`, { headers: { cookie: harness.cookie } });
	const text = await detail.text();
	assert.match(text, /maxmemory-policy allkeys-lru/, `the error names the policy: ${text.slice(0, 2000)}`);
	assert.match(text, /Set maxmemory-policy to noeviction/, `the error names the fix: ${text.slice(0, 2000)}`);
	// Delivery reports of earlier scenarios' texts may still land in the ledger: count requests only.
	const sends = emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind !== 'delivery');
	assert.equal(sends.length, 0, `the gateway saw no send request: ${JSON.stringify(sends)}`);
	log(`9. a credential naming a Redis with maxmemory-policy allkeys-lru: SMS execution ${execution.id} failed naming the fix (noeviction), 0 sends at the gateway`);
}
