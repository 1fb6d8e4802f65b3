/**
 * Scenario 7 of `npm run test:e2e:queue`: a worker SIGKILLed in the middle of a 20-message batch,
 * then the crashed execution retried through n8n's REST API, and the same batch posted again (n8n
 * 2.41 ends the retry of a stalled job at once without running its nodes: "This execution failed
 * to be processed too many times"). Each number is texted exactly once over all of them, as the
 * emulator's ledger says: the sends the killed run had only reserved are taken over and sent. The credential names no
 * Redis: the send records are in n8n's own queue Redis (store/openStore.ts), as a queue-mode user
 * gets them without an extra field.
 */
import assert from 'node:assert/strict';

import { isWebhookRegistered } from '../../scripts/n8n-runtime';
import type { Emulator } from '../emulator/server';
import { sendRecordsIn, startQueueHarness, startedOn, until } from './queueCluster';
import { log, postJson } from './queueScenarios';
import { gatewayCredential, GATEWAY_CAP_PER_SECOND, smsWorkflow } from './queueWorkflows';

const KILL = { id: 'dgwKilledSms', path: 'dgw-killed-sms' };
const MESSAGES = 20;

/** Texts the gateway took, per number. */
function textsPerNumber(emulator: Emulator): Map<string, number> {
	const texts = new Map<string, number>();
	for (const call of emulator.ledger().calls) {
		if (call.path !== '/sms/send' || call.kind !== 'call' || call.code !== 0 || !call.phone) continue;
		texts.set(call.phone, (texts.get(call.phone) ?? 0) + 1);
	}
	return texts;
}

export async function workerKilledMidBatch(emulator: Emulator): Promise<void> {
	const phones = Array.from({ length: MESSAGES }, (_, index) => `1376600${String(index).padStart(4, '0')}`);
	const harness = await startQueueHarness(
		{
			credentials: () => {
				const credential = gatewayCredential({ gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND });
				// One send at a time: at the kill, at most one is in flight.
				return [{ ...credential, data: { ...credential.data, maxConcurrent: 1 } }];
			},
			workflows: [smsWorkflow(KILL.id, KILL.path, Number(emulator.demo.signatureId), Number(emulator.demo.templateWithoutVariablesId))],
			publish: [KILL.id],
		},
		log,
	);
	let passed = false;
	try {
		const { webhook, main, workers } = harness.cluster;
		emulator.configure({ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });
		// Each send takes 300 ms at the gateway, so the batch is still going when half of it went out.
		emulator.setFaults({ latencyMs: 300 });
		emulator.resetLedger();
		// n8n 2.x registers published webhooks in the background, after the process is ready.
		await until(async () => await isWebhookRegistered(webhook.url, `webhook/${KILL.path}`), 'the SMS webhook to be registered');
		const before = workers.map((worker) => worker.log().length);
		const answer = await postJson(`${webhook.url}/webhook/${KILL.path}`, { phones: phones.map((phone) => ({ phone })) });
		assert.equal(answer.status, 200, `the SMS workflow started: ${JSON.stringify(answer.body)}`);

		await until(async () => [...textsPerNumber(emulator).values()].reduce((sum, count) => sum + count, 0) >= MESSAGES / 2, 'half of the batch to be texted');
		const ranOn = workers.findIndex((worker, index) => startedOn(worker.log().slice(before[index])).length > 0);
		assert.ok(ranOn >= 0, 'a worker started the execution');
		for (const pid of workers[ranOn].pids()) process.kill(pid, 'SIGKILL');
		const sentBeforeKill = textsPerNumber(emulator).size;
		log(`7. worker ${ranOn + 1} SIGKILLed after ${sentBeforeKill} of ${MESSAGES} texts`);

		const [crashed] = await until(async () => {
			const list = await harness.executions(KILL.id);
			return list.length === 1 && !['running', 'new', 'waiting'].includes(list[0].status) && list;
		}, 'n8n to mark the killed execution as ended', 180_000);
		emulator.setFaults({});
		const retry = await fetch(`${main.url}/rest/executions/${crashed.id}/retry`, {
			method: 'POST',
			headers: { cookie: harness.cookie, 'content-type': 'application/json' },
			body: JSON.stringify({ loadWorkflow: false }),
		});
		assert.ok(retry.ok, `retry of the ${crashed.status} execution answered ${retry.status}: ${await retry.clone().text()}`);
		const retried = await until(async () => {
			const list = await harness.executions(KILL.id);
			return list.find((execution) => execution.id !== crashed.id && !['running', 'new', 'waiting'].includes(execution.status));
		}, 'the retried execution to finish', 120_000);

		const stopped = await (await fetch(`${main.url}/rest/executions/${retried.id}`, { headers: { cookie: harness.cookie }, signal: AbortSignal.timeout(60_000) })).text();
		const refusal = /failed to be processed too many times/.test(stopped);
		log(`7. n8n's retry ${retried.id} ended ${retried.status}${refusal ? ' without running the nodes ("This execution failed to be processed too many times": n8n 2.41 does not re-run a stalled job)' : ''}`);
		// What a user does next in n8n 2.41: run the same input again, a new execution.
		const before2 = textsPerNumber(emulator);
		// Seen once on a loaded machine: this post never reached the webhook process and hung for undici's
		// 5 minutes. It is posted once more after a minute; the send records keep every number to one text.
		const postAgain = () => postJson(`${webhook.url}/webhook/${KILL.path}`, { phones: phones.map((phone) => ({ phone })) }, { timeoutMs: 60_000 });
		const again = await postAgain().catch((error: unknown) => {
			log(`7. the post got no answer within a minute (${String(error)}); posting once more`);
			return postAgain();
		});
		assert.equal(again.status, 200, `the batch was posted again: ${JSON.stringify(again.body)}`);
		const rerun = await until(async () => {
			const list = await harness.executions(KILL.id);
			return list.find((execution) => ![crashed.id, retried.id].includes(execution.id) && !['running', 'new', 'waiting'].includes(execution.status));
		}, 'the batch posted again to finish', 120_000);
		assert.equal(rerun.status, 'success', `the new execution succeeded: ${JSON.stringify(rerun)}`);
		log(`7. the same batch again (execution ${rerun.id}) sent ${MESSAGES - [...before2.values()].reduce((sum, count) => sum + count, 0)} texts more`);
		const texts = textsPerNumber(emulator);
		const wrong = phones.filter((phone) => texts.get(phone) !== 1).map((phone) => `${phone}: ${texts.get(phone) ?? 0}`);
		assert.deepEqual(wrong, [], `each number texted exactly once over all executions`);
		// One message record per number, whichever execution sent it (the killed one's last send may stay `unknown`).
		const recorded = sendRecordsIn(harness.redis);
		assert.ok(recorded.messages >= MESSAGES, `each number's message is recorded in n8n's queue Redis: ${JSON.stringify(recorded)}`);
		log(`7. execution ${crashed.id} killed mid-batch, retried (${retried.id}) and run again (${rerun.id}): each of ${MESSAGES} numbers texted exactly once (${recorded.messages} messages recorded in n8n's queue Redis)`);
		passed = true;
	} finally {
		emulator.setFaults({});
		await harness.stop({ keepLogs: !passed });
	}
}
