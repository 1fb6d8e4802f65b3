/**
 * `npm run test:e2e:queue`: the built package in n8n 2.41 queue mode. Starts Redis, PostgreSQL 17,
 * n8n main, 2 workers and a webhook process (each with the package installed the Community Nodes
 * way) and the gateway emulator, then checks what a queue-mode user relies on (scenarios 1-5 in
 * test/e2e/queueScenarios.ts, 6 below):
 * 1. a lookup batch runs on a worker and answers correctly;
 * 2. two 200-number batches at once, one per worker, share the gateway's 20 requests per second;
 * 3. one callback posted to the webhook process and then to main starts one workflow;
 * 4. 10 rounds of the same 5-message batch posted twice at once, one execution per worker: each
 *    number is texted once per round, and a different message to the same numbers right after is
 *    sent, not refused (the node allows 2 a minute per number, so a count left behind by the race
 *    would refuse it); the SMS credential names no Redis, and the send records are found in n8n's
 *    queue Redis (database 0), which the store reached through n8n's own settings;
 * 5. an execution that sent one SMS and failed on another, retried on the other worker, does
 *    not text the first number again (the SMS node's Repeat Window, in Redis);
 * 6. in regular mode (one process, SQLite) the same callback after a restart starts nothing, and
 *    two executions of the same SMS node with the same message at once send it once (the send
 *    records in the durable store's SQLite file);
 * 7. a worker SIGKILLed mid-batch, the crashed execution retried: each number texted exactly once
 *    (test/e2e/queueWorkerKill.ts, its own cluster, with the records in n8n's queue Redis);
 * 8. a lookup workflow with Reuse Answers For run again on the other worker pays 0 calls
 *    (test/e2e/queueReuse.ts, its own cluster, with the answers in n8n's queue Redis);
 * 9. (in the first cluster, before 5) a credential naming a Redis with maxmemory-policy
 *    allkeys-lru: the SMS node refuses to send, naming the fix, and the gateway sees no send
 *    (test/e2e/queueEviction.ts);
 * 10. a daily budget of 2.00 yuan, two 1.20 lookups at once on the two workers: at most 2.00 billed,
 *    the refused item names the budget; 11. a cap of 2.00 yuan over lookup -> Wait 70 s -> lookup,
 *    resumed on the other worker: 1.20 billed, the second refused by the cap; 12. two credentials
 *    with different appCodes: no kept answer, report or Reference crosses them (test/e2e/queueMoney.ts
 *    and queueAccounts.ts, their own cluster).
 * QUEUE_SCENARIOS=10,11,12 (say) runs only the clusters and scenarios named (the first cluster runs
 * 1-5 and 9 together).
 * Every cluster's queue Redis requires a password, which n8n and the store read from
 * QUEUE_BULL_REDIS_PASSWORD_FILE, and serves TLS only, with a certificate made at the start that
 * every process trusts through NODE_EXTRA_CA_CERTS (test/e2e/queueCluster.ts).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { activateWorkflow, ensureRuntime, installAsCommunityPackage, packPackage, runN8nCommand, startN8n } from '../../scripts/n8n-runtime';

import { startEmulator, type Emulator } from '../emulator/server';
import { sendRecordsIn, startQueueHarness, type QueueHarness } from './queueCluster';
import { evictingCredential, evictingSmsWorkflow, EVICTING_SMS, smsRefusedOnEvictingRedis, startEvictingRedis } from './queueEviction';
import { moneyAcrossWorkers } from './queueMoney';
import { reuseAcrossWorkers } from './queueReuse';
import { workerKilledMidBatch } from './queueWorkerKill';
import {
	acceptedSends,
	type Item,
	LOOKUPS_A,
	LOOKUPS_B,
	log,
	lookupBatchOnWorker,
	oneCallbackOneStart,
	postJson,
	report,
	retryOnTheOtherWorkerSendsOnce,
	sameBatchOnBothWorkersSendsOnce,
	SMS,
	SMS_ROUNDS,
	TRIGGER_ID,
	twoWorkersShareTheRate,
} from './queueScenarios';
import { gatewayCredential, GATEWAY_CAP_PER_SECOND, lookupWorkflow, smsRoundsWorkflow, smsWorkflow, triggerPath, triggerWorkflow } from './queueWorkflows';

const REGULAR_SMS = { id: 'dgwRegularSms', path: 'dgw-regular-sms' };
/** The SMS workflows' credential: no Shared Redis URL, so in queue mode the send records go to n8n's queue Redis. */
const SMS_CREDENTIAL_ID = 'dgwQueueSmsSender';
/** Where the lookups' credential keeps its shared rate and store: another database of the same Redis, so database 0 holds only what came through n8n's settings. */
const CREDENTIAL_DATABASE = 1;

async function regularMode(emulator: Emulator) {
	const runtime = await ensureRuntime('2', log);
	const userFolder = mkdtempSync(join(tmpdir(), 'dgw-regular-'));
	const env = { N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5' };
	try {
		installAsCommunityPackage(runtime, userFolder, packPackage(join(userFolder, 'pack')));
		mkdirSync(join(userFolder, 'import', 'workflows'), { recursive: true });
		const credentials = join(userFolder, 'import', 'credentials.json');
		// No Redis URL: the send records are in the durable store's SQLite file in the user folder.
		writeFileSync(credentials, JSON.stringify([gatewayCredential({ gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND })]));
		writeFileSync(join(userFolder, 'import', 'workflows', 'trigger.json'), JSON.stringify(triggerWorkflow(TRIGGER_ID)));
		writeFileSync(
			join(userFolder, 'import', 'workflows', 'sms.json'),
			JSON.stringify(smsRoundsWorkflow(REGULAR_SMS.id, REGULAR_SMS.path, Number(emulator.demo.signatureId), Number(emulator.demo.templateId), { answerWhenDone: true })),
		);
		for (const args of [['import:credentials', `--input=${credentials}`], ['import:workflow', '--separate', `--input=${join(userFolder, 'import', 'workflows')}`]]) {
			const imported = await runN8nCommand(runtime, args, { userFolder, env });
			assert.equal(imported.code, 0, `${args[0]} failed:\n${imported.stdout}\n${imported.stderr}`);
		}
		await activateWorkflow(runtime, TRIGGER_ID, { userFolder, env });
		await activateWorkflow(runtime, REGULAR_SMS.id, { userFolder, env });
		const postTo = async (url: string, id: string) => (await postJson(`${url}/${triggerPath}`, report(id))).body;

		let n8n = await startN8n(runtime, { userFolder, env, webhookPaths: [triggerPath, `webhook/${REGULAR_SMS.path}`] });
		try {
			assert.deepEqual(await postTo(n8n.url, 'REGULAR-T1'), { received: true, started: true }, 'the first callback starts the workflow');
			emulator.configure({ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });
			emulator.resetLedger();
			const batch = { phones: [{ phone: '13722000001', code: '5511' }] };
			const url = `${n8n.url}/webhook/${REGULAR_SMS.path}`;
			// The webhook answers with the node's output once each execution has finished.
			const answers = await Promise.all([postJson(url, batch), postJson(url, batch)]);
			assert.ok(answers.every((answer) => answer.status === 200), `both executions answered: ${JSON.stringify(answers)}`);
			const outputs = answers.map((answer) => (answer.body as Item[])[0]);
			assert.deepEqual(outputs.map((output) => output.skippedAsRepeat).sort(), [false, true], `one sent, one skipped as a repeat: ${JSON.stringify(outputs)}`);
			assert.equal(acceptedSends(emulator), 1, 'two executions of the same node with the same message at once sent it once');
		} finally {
			await n8n.stop();
		}
		n8n = await startN8n(runtime, { userFolder, env, webhookPaths: [triggerPath] });
		try {
			assert.deepEqual(await postTo(n8n.url, 'REGULAR-T1'), { received: true, started: false, reason: 'duplicate' }, 'after a restart the same callback starts nothing');
			assert.deepEqual(await postTo(n8n.url, 'REGULAR-T2'), { received: true, started: true }, 'another event still starts it');
		} finally {
			await n8n.stop();
		}
		log('6. regular mode: two executions of one SMS node with the same message at once sent it once; the same callback after a restart of n8n started nothing');
	} finally {
		rmSync(userFolder, { recursive: true, force: true });
	}
}

/** The scenarios QUEUE_SCENARIOS names (every one when unset). */
const only = process.env.QUEUE_SCENARIOS?.split(',').map((name) => Number(name.trim()));
const wanted = (scenario: number) => !only || only.includes(scenario);

async function firstCluster(emulator: Emulator) {
	const started = Date.now();
	let harness: QueueHarness | undefined;
	const evicting = await startEvictingRedis(log);
	let passed = false;
	try {
		const signId = Number(emulator.demo.signatureId);
		harness = await startQueueHarness(
			{
				credentials: (redis) => [
					gatewayCredential({
						gatewayUrl: emulator.url,
						appCode: emulator.demo.memberAppCode,
						maxPerSecond: GATEWAY_CAP_PER_SECOND,
						// Per-process limits: each worker learns the cap from its own 429s (measured 23.5 and 31.9 s; QUEUE_PER_PROCESS_LIMITS=true to see).
						sharedLimitRedisUrl: process.env.QUEUE_PER_PROCESS_LIMITS === 'true' ? undefined : `${redis.url}/${CREDENTIAL_DATABASE}`,
					}),
					gatewayCredential({ id: SMS_CREDENTIAL_ID, gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND }),
					evictingCredential(emulator, evicting),
				],
				workflows: [
					lookupWorkflow(LOOKUPS_A.id, LOOKUPS_A.path),
					lookupWorkflow(LOOKUPS_B.id, LOOKUPS_B.path),
					triggerWorkflow(TRIGGER_ID),
					smsWorkflow(SMS.id, SMS.path, signId, Number(emulator.demo.templateWithoutVariablesId), SMS_CREDENTIAL_ID),
					smsRoundsWorkflow(SMS_ROUNDS.id, SMS_ROUNDS.path, signId, Number(emulator.demo.templateId), { credentialId: SMS_CREDENTIAL_ID }),
					evictingSmsWorkflow(emulator),
				],
				publish: [LOOKUPS_A.id, LOOKUPS_B.id, TRIGGER_ID, SMS.id, SMS_ROUNDS.id, EVICTING_SMS.id],
			},
			log,
		);
		log(`queue mode up in ${Math.round((Date.now() - started) / 1000)} s`);
		await lookupBatchOnWorker(harness, emulator);
		await twoWorkersShareTheRate(harness, emulator);
		await oneCallbackOneStart(harness);
		await sameBatchOnBothWorkersSendsOnce(harness, emulator);
		// The SMS credential names no Redis: its records can only have come through n8n's settings.
		const texts = acceptedSends(emulator);
		const recorded = sendRecordsIn(harness.redis);
		assert.ok(recorded.sent >= texts && recorded.messages >= texts, `the ${texts} texts of scenario 4 are recorded in n8n's queue Redis: ${JSON.stringify(recorded)}`);
		log(`4. in n8n's queue Redis (database 0, TLS, password from QUEUE_BULL_REDIS_PASSWORD_FILE): ${recorded.sent} sends and ${recorded.messages} messages recorded for ${texts} texts`);
		await smsRefusedOnEvictingRedis(harness, emulator);
		// Last: it stops a worker.
		await retryOnTheOtherWorkerSendsOnce(harness, emulator);
		passed = true;
	} finally {
		await harness?.stop({ keepLogs: !passed });
		await evicting.stop();
	}
}

async function main() {
	const started = Date.now();
	const emulator = await startEmulator({ reviewDelayMs: 500, deliveryDelayMs: 500, deliveryFailureShare: 0 });
	try {
		if ([1, 2, 3, 4, 5, 9].some(wanted)) await firstCluster(emulator);
		if (wanted(6)) await regularMode(emulator);
		if (wanted(7)) await workerKilledMidBatch(emulator);
		if (wanted(8)) await reuseAcrossWorkers(emulator);
		if ([10, 11, 12].some(wanted)) await moneyAcrossWorkers(emulator, wanted);
	} finally {
		await emulator.close();
	}
	log(`queue mode: passed in ${Math.round((Date.now() - started) / 1000)} s`);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
