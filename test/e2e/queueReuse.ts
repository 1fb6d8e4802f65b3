/**
 * Scenario 8 of `npm run test:e2e:queue`: Reuse Answers For across workers. The same lookup
 * workflow runs twice, the second time on the other worker (the first one stopped), and pays 0
 * calls there, as the emulator's ledger says. The credential names no Redis and each worker has
 * its own user folder (so its own SQLite file): the only store both see is n8n's queue Redis, which
 * the store picks by itself in queue mode (store/openStore.ts).
 */
import assert from 'node:assert/strict';

import { isWebhookRegistered } from '../../scripts/n8n-runtime';
import type { Emulator } from '../emulator/server';
import { startedOn, startQueueHarness, storeValues, until, type QueueHarness } from './queueCluster';
import { log, postJson, type Item } from './queueScenarios';
import { distinctPhones, gatewayCredential, GATEWAY_CAP_PER_SECOND, lookupWorkflow } from './queueWorkflows';

const REUSE = { id: 'dgwQueueReuse', path: 'dgw-queue-reuse' };
const NUMBERS = 5;

/** Webhook -> one item per phone -> Telephone with Reuse Answers For 24 hours. */
function reuseWorkflow() {
	const workflow = lookupWorkflow(REUSE.id, REUSE.path);
	const [webhook, split, node] = workflow.nodes;
	const identify = node as typeof node & { parameters: Record<string, unknown> };
	return { ...workflow, nodes: [webhook, split, { ...identify, parameters: { ...identify.parameters, options: { reuseAnswersHours: 24 } } }] };
}

/** Posts the numbers and returns the output items and the worker that ran the execution. */
async function lookUp(harness: QueueHarness, phones: Array<{ phone: string }>): Promise<{ items: Item[]; worker: number }> {
	const { webhook, workers } = harness.cluster;
	const before = workers.map((worker) => worker.log().length);
	const answer = await postJson(`${webhook.url}/webhook/${REUSE.path}`, { phones });
	assert.equal(answer.status, 200, `the lookup workflow answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
	const worker = workers.findIndex((process, index) => startedOn(process.log().slice(before[index])).length > 0);
	assert.ok(worker >= 0, 'a worker ran the execution');
	return { items: answer.body as Item[], worker };
}

export async function reuseAcrossWorkers(emulator: Emulator): Promise<void> {
	const harness = await startQueueHarness(
		{
			// No Shared Redis URL: the answers must go to n8n's queue Redis by themselves.
			credentials: () => [gatewayCredential({ gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND })],
			workflows: [reuseWorkflow()],
			publish: [REUSE.id],
		},
		log,
	);
	let passed = false;
	try {
		const { webhook, workers } = harness.cluster;
		await until(async () => await isWebhookRegistered(webhook.url, `webhook/${REUSE.path}`), 'the lookup webhook to be registered');
		const phones = distinctPhones('135', NUMBERS);
		emulator.resetLedger();
		const first = await lookUp(harness, phones);
		assert.deepEqual(first.items.map((item) => [item.reused, item.error]), phones.map(() => [false, undefined]), `the first execution asked the gateway: ${JSON.stringify(first.items).slice(0, 500)}`);
		assert.equal(emulator.ledger().byPath['/telecom/identify']?.calls, NUMBERS, `${NUMBERS} numbers, ${NUMBERS} calls`);
		// The store hashes its key names (store/keyName.ts): count its keys, one per kept answer and the day's telephone count.
		const kept = storeValues(harness.redis).length;
		assert.ok(kept >= NUMBERS, `the answers are in n8n's queue Redis: ${kept} keys of the store there`);

		// The worker that paid goes away: the second execution can only run on the other one.
		await workers[first.worker].stop();
		emulator.resetLedger();
		const second = await lookUp(harness, phones);
		assert.notEqual(second.worker, first.worker, 'the second execution ran on the other worker');
		assert.deepEqual(second.items.map((item) => [item.reused, item.phone]), phones.map(({ phone }) => [true, phone]), `every answer reused: ${JSON.stringify(second.items).slice(0, 500)}`);
		assert.equal(emulator.ledger().byPath['/telecom/identify']?.calls ?? 0, 0, 'the second execution made no call');
		log(`8. Reuse Answers For: ${NUMBERS} lookups paid ${NUMBERS} calls on worker ${first.worker + 1}, then 0 on worker ${second.worker + 1} (answers in n8n's queue Redis)`);
		passed = true;
	} finally {
		await harness.stop({ keepLogs: !passed });
	}
}
