/**
 * Scenarios 10 and 11 of `npm run test:e2e:queue` (their own cluster, two workers, credentials
 * naming no Redis, so the spend is kept in n8n's queue Redis):
 * 10. a daily budget of 2.00 yuan, two webhook calls at once, each one vehicle detail (1.20), one
 *     execution per worker: the gateway bills at most 2.00 over both and the refused item names
 *     the budget (issue 34);
 * 11. a spending cap of 2.00 yuan, vehicle detail (1.20) -> Wait 70 s -> vehicle detail (1.20):
 *     a Wait over 65 s puts the execution in the database, and the worker that started it is
 *     stopped, so the other worker resumes it; the second detail is refused by the cap and the
 *     gateway billed 1.20 for the execution, whose final status is read from n8n's REST API (issue 33);
 * 12. (before 11) two credentials with different appCodes: no kept answer, report or Reference
 *     crosses them (test/e2e/queueAccounts.ts, issue 33).
 */
import assert from 'node:assert/strict';

import { isWebhookRegistered, NODE_TYPE_PREFIX } from '../../scripts/n8n-runtime';
import type { Emulator } from '../emulator/server';
import { accountCredentials, accountPaths, accountWorkflowIds, accountWorkflows, twoAccountsOnOneN8n } from './queueAccounts';
import { startedOn, startQueueHarness, until, type QueueHarness } from './queueCluster';
import { log, postJson, type Item } from './queueScenarios';

const CAP_CREDENTIAL = 'dgwQueueCap';
const BUDGET_CREDENTIAL = 'dgwQueueBudget';
const BUDGET = { id: 'dgwQueueBudget', path: 'dgw-queue-budget' };
const WAIT = { id: 'dgwQueueWaitCap', path: 'dgw-queue-wait-cap' };
const DETAIL_PRICE = 1.2;
const WAIT_SECONDS = 70;

type Json = Record<string, unknown>;
const to = (node: string) => ({ main: [[{ node, type: 'main', index: 0 }]] });
const credentialOf = (id: string) => ({ dataGatewayApi: { id, name: `Data Gateway (${id})` } });

function credential(emulator: Emulator, id: string, limits: Json) {
	return {
		id,
		name: `Data Gateway (${id})`,
		type: 'dataGatewayApi',
		data: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, appCodePlacement: 'query', maxPerSecond: 20, ...limits },
	};
}

function detailNode(name: string, x: number, carNumber: string, credentialId: string) {
	return {
		id: name.toLowerCase().replace(/\W/g, '-'),
		name,
		type: `${NODE_TYPE_PREFIX}dataGatewayVehicle`,
		typeVersion: 1.1,
		position: [x, 0],
		parameters: { resource: 'vehicle', operation: 'getDetail', carNumber, carType: '02' },
		credentials: credentialOf(credentialId),
		// A refused item becomes an output item, so the execution ends "success" with the refusal in it.
		onError: 'continueRegularOutput',
	};
}

function webhookNode(path: string, responseMode: 'lastNode' | 'onReceived') {
	return {
		id: `${path}-in`,
		name: 'In',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: `${path}-hook`,
		parameters: { httpMethod: 'POST', path, responseMode, ...(responseMode === 'lastNode' ? { responseData: 'allEntries' } : {}), options: {} },
	};
}

/** POST {plate}: one vehicle detail with the budget credential; answers with the detail's item. */
function budgetWorkflow() {
	return {
		id: BUDGET.id,
		name: 'Queue: daily budget',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [webhookNode(BUDGET.path, 'lastNode'), detailNode('Detail', 220, '={{ $json.body.plate }}', BUDGET_CREDENTIAL)],
		connections: { In: to('Detail') },
	};
}

/** Webhook (answers at once) -> detail -> Wait 70 s -> detail of another plate, with the cap credential. */
function waitWorkflow() {
	return {
		id: WAIT.id,
		name: 'Queue: cap across a Wait',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(WAIT.path, 'onReceived'),
			detailNode('First Detail', 220, '京A70001', CAP_CREDENTIAL),
			{
				id: 'wait',
				name: 'Wait',
				type: 'n8n-nodes-base.wait',
				typeVersion: 1.1,
				position: [440, 0],
				webhookId: `${WAIT.path}-wait`,
				parameters: { resume: 'timeInterval', amount: WAIT_SECONDS, unit: 'seconds' },
			},
			detailNode('Second Detail', 660, '京A70002', CAP_CREDENTIAL),
		],
		connections: { In: to('First Detail'), 'First Detail': to('Wait'), Wait: to('Second Detail') },
	};
}

const billedDetails = (emulator: Emulator) => emulator.ledger().byPath['/car/query']?.billedCalls ?? 0;
const yuan = (calls: number) => Math.round(calls * DETAIL_PRICE * 100) / 100;

async function budgetAcrossWorkers(harness: QueueHarness, emulator: Emulator) {
	const { webhook, workers } = harness.cluster;
	const before = workers.map((worker) => worker.log().length);
	// Each lookup takes a while, so the second worker decides while the first is still asking.
	emulator.setFaults({ latencyMs: 500 });
	emulator.resetLedger();
	try {
		const url = `${webhook.url}/webhook/${BUDGET.path}`;
		const answers = await Promise.all([postJson(url, { plate: '京B70001' }), postJson(url, { plate: '京B70002' })]);
		assert.ok(answers.every((answer) => answer.status === 200), `both executions answered: ${JSON.stringify(answers)}`);
		const starts = workers.map((worker, index) => startedOn(worker.log().slice(before[index])).length);
		assert.deepEqual(starts, [1, 1], `one execution per worker: ${JSON.stringify(starts)}`);
		const items = answers.flatMap((answer) => answer.body as Item[]);
		assert.equal(items.length, 2, `one item per execution: ${JSON.stringify(items)}`);
		const billed = billedDetails(emulator);
		assert.ok(yuan(billed) <= 2, `the gateway billed ${yuan(billed)} yuan over both workers, above the daily budget of 2.00`);
		assert.equal(billed, 1, 'the budget holds one vehicle detail: one of the two is made');
		const refused = items.filter((item) => item.error !== undefined);
		assert.equal(refused.length, 1, `one item refused: ${JSON.stringify(items)}`);
		assert.match(String(refused[0].error), /Daily budget: .* above its daily budget of 2\.00 yuan \(1\.20 yuan spent; it resets at \d{4}-\d\d-\d\dT00:00:00\+08:00\)/, `the refused item names the budget: ${JSON.stringify(refused[0])}`);
		log(`10. daily budget 2.00, two vehicle details at once on two workers: ${billed} billed (${yuan(billed)} yuan), the other refused naming the budget`);
	} finally {
		emulator.clearFaults();
	}
}

/** The execution's stored run data (n8n keeps it "flatted": searched as text here). */
async function executionData(harness: QueueHarness, id: string): Promise<string> {
	const response = await fetch(`${harness.cluster.main.url}/rest/executions/${id}`, { headers: { cookie: harness.cookie } });
	assert.ok(response.ok, `GET /rest/executions/${id} answered ${response.status}`);
	const body = (await response.json()) as { data: { data: unknown } };
	return typeof body.data.data === 'string' ? body.data.data : JSON.stringify(body.data.data);
}

async function capAcrossWait(harness: QueueHarness, emulator: Emulator) {
	const { webhook, workers } = harness.cluster;
	const before = workers.map((worker) => worker.log().length);
	emulator.resetLedger();
	const answer = await postJson(`${webhook.url}/webhook/${WAIT.path}`, {});
	assert.equal(answer.status, 200, `the Wait workflow answered ${answer.status}: ${JSON.stringify(answer.body)}`);
	const [execution] = await until(async () => {
		const found = (await harness.executions(WAIT.id)).filter((run) => run.status === 'waiting');
		return found.length > 0 ? found : undefined;
	}, 'the execution to wait');
	assert.equal(billedDetails(emulator), 1, 'the first detail was billed before the Wait');
	const first = workers.findIndex((worker, index) => startedOn(worker.log().slice(before[index])).includes(execution.id));
	assert.ok(first >= 0, `a worker started execution ${execution.id}`);
	// The worker that spent 1.20 goes away: the execution can only resume on the other one.
	await workers[first].stop();
	const other = workers[1 - first];
	const otherBefore = other.log().length;
	const done = await until(
		async () => (await harness.executions(WAIT.id)).find((run) => run.id === execution.id && !['waiting', 'running', 'new'].includes(run.status)),
		'the execution to resume and finish',
		(WAIT_SECONDS + 150) * 1000,
	);
	assert.equal(done.status, 'success', `the execution ended ${done.status}`);
	assert.ok(startedOn(other.log().slice(otherBefore)).includes(execution.id), `the other worker resumed execution ${execution.id}`);
	const billed = billedDetails(emulator);
	assert.ok(yuan(billed) <= 2, `the gateway billed ${yuan(billed)} yuan for one execution with a cap of 2.00`);
	assert.equal(billed, 1, 'only the first detail was billed');
	const data = await executionData(harness, execution.id);
	// The 1.20 spent before the Wait, on the stopped worker, is what the resumed execution counts.
	assert.match(data, /Spending cap: [^"]*with 1\.2 yuan already spent in this execution with this credential that is 2\.4 yuan, above the cap of 2 yuan/, 'the second detail was refused by the cap');
	log(`11. cap 2.00, detail -> Wait ${WAIT_SECONDS} s -> detail, resumed on worker ${2 - first}: ${billed} billed (${yuan(billed)} yuan), the second refused by the cap`);
}

export async function moneyAcrossWorkers(emulator: Emulator, wanted: (scenario: number) => boolean): Promise<void> {
	const harness = await startQueueHarness(
		{
			credentials: () => [credential(emulator, BUDGET_CREDENTIAL, { dailyBudgetYuan: 2 }), credential(emulator, CAP_CREDENTIAL, { maxSpendPerExecution: 2 }), ...accountCredentials(emulator)],
			workflows: [budgetWorkflow(), waitWorkflow(), ...accountWorkflows(emulator)],
			publish: [BUDGET.id, WAIT.id, ...accountWorkflowIds()],
		},
		log,
	);
	let passed = false;
	try {
		const { webhook } = harness.cluster;
		for (const path of [BUDGET.path, WAIT.path, ...accountPaths()]) await until(async () => await isWebhookRegistered(webhook.url, `webhook/${path}`), `webhook/${path} to be registered`);
		if (wanted(10)) await budgetAcrossWorkers(harness, emulator);
		if (wanted(12)) await twoAccountsOnOneN8n(harness, emulator);
		// Last: it stops a worker.
		if (wanted(11)) await capAcrossWait(harness, emulator);
		passed = true;
	} finally {
		await harness.stop({ keepLogs: !passed });
	}
}
