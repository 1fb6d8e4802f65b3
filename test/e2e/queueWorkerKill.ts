/**
 * Scenario 7 of `npm run test:e2e:queue`: a worker SIGKILLed in the middle of a 20-message batch,
 * then the crashed execution retried through n8n's REST API on the other worker. Each number is
 * texted exactly once over both executions, as the emulator's ledger says. The credential names no
 * Redis: the send records are in n8n's own queue Redis (store/openStore.ts), as a queue-mode user
 * gets them without an extra field.
 */
import assert from 'node:assert/strict';

import type { Emulator } from '../emulator/server';
import { startQueueHarness, startedOn, until } from './queueCluster';
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
			credentials: () => [gatewayCredential({ gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND })],
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

		const texts = textsPerNumber(emulator);
		const wrong = phones.filter((phone) => texts.get(phone) !== 1).map((phone) => `${phone}: ${texts.get(phone) ?? 0}`);
		assert.deepEqual(wrong, [], `each number texted exactly once over both executions (retry ${retried.id}: ${retried.status})`);
		log(`7. execution ${crashed.id} (${crashed.status}) retried as ${retried.id} (${retried.status}): each of ${MESSAGES} numbers texted exactly once`);
		passed = true;
	} finally {
		emulator.setFaults({});
		await harness.stop({ keepLogs: !passed });
	}
}
