/**
 * Issue 34 item 1 in real n8n: two workflows on one credential with a daily budget of 2.00 yuan,
 * each asking for two vehicle details (1.20 each), in two `n8n execute` processes at the same
 * instant (a barrier, as in sameHostRace.ts). The budget is counted in the SQLite store of their
 * shared user folder: the emulator's ledger (the bill) must show at most 2.00 yuan over both, and
 * every refused item must name the daily budget.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { n8nCommand } from '../../scripts/n8n-runtime';
import { importFile, manualStart, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

type Json = Record<string, unknown>;

const BUDGET_CREDENTIAL = { id: 'dgw-budget-daily', name: 'Data Gateway (daily budget 2.00 yuan)' };
const PROCESSES = 2;
const DETAIL_PRICE = 1.2;

/** Holds each arrival until PROCESSES have arrived, then answers them all at once. */
async function startBarrier() {
	let waiting: ServerResponse[] = [];
	let arrivals = 0;
	const server = createServer((request, response) => {
		request.resume();
		arrivals++;
		waiting.push(response);
		if (waiting.length < PROCESSES) return;
		for (const held of waiting) held.writeHead(200, { 'content-type': 'application/json' }).end('{"go":true}');
		waiting = [];
	});
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/barrier`,
		arrivals: () => arrivals,
		close: async () => {
			for (const held of waiting) held.destroy();
			await new Promise((done) => server.close(done));
		},
	};
}

/** Start -> Barrier -> two plates -> Get Vehicle Detail (failed items continue as items). */
function budgetWorkflow(options: MoneySafetyOptions, id: string, plates: string[], barrierUrl: string): Json {
	const to = (node: string) => [{ node, type: 'main', index: 0 }];
	return {
		id,
		name: `Shared budget: ${plates.join(', ')}`,
		active: false,
		nodes: [
			manualStart,
			{ id: 'barrier', name: 'Barrier', type: 'n8n-nodes-base.httpRequest', typeVersion: 4.2, position: [220, 0], parameters: { url: barrierUrl, options: { timeout: 300_000 } } },
			{
				id: 'list',
				name: 'List',
				type: 'n8n-nodes-base.set',
				typeVersion: 3.4,
				position: [440, 0],
				parameters: { assignments: { assignments: [{ id: 'a1', name: 'list', value: JSON.stringify(plates.map((plate) => ({ plate }))), type: 'array' }] }, options: {} },
			},
			{ id: 'split', name: 'Split', type: 'n8n-nodes-base.splitOut', typeVersion: 1, position: [660, 0], parameters: { fieldToSplitOut: 'list', options: {} } },
			{
				id: 'detail',
				name: 'Detail',
				type: `${options.typePrefix}dataGatewayVehicle`,
				typeVersion: 1.1,
				position: [880, 0],
				parameters: { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' },
				credentials: { dataGatewayApi: BUDGET_CREDENTIAL },
				onError: 'continueRegularOutput',
			},
		],
		connections: { Start: { main: [to('Barrier')] }, Barrier: { main: [to('List')] }, List: { main: [to('Split')] }, Split: { main: [to('Detail')] } },
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

/** The Detail node's output items of one `n8n execute` process. */
async function execute(options: MoneySafetyOptions, workflowId: string): Promise<Json[]> {
	const result = await n8nCommand(options.runtime, ['execute', `--id=${workflowId}`, '--rawOutput'], options.environment);
	assert.equal(result.code, 0, `n8n execute ${workflowId} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
	type NodeRun = { data?: { main?: Array<Array<{ json: Json }>> } };
	const run = parsePrintedRun<{ data: { resultData: { runData: Record<string, NodeRun[]> } } }>(result.stdout);
	const detail = run.data.resultData.runData.Detail?.[0];
	assert.ok(detail, `the Detail node did not run:\n${result.stdout.slice(-3000)}`);
	return (detail.data?.main?.[0] ?? []).map((item) => item.json);
}

export async function checkSharedBudget(options: MoneySafetyOptions): Promise<void> {
	const { emulator, log } = options;
	const barrier = await startBarrier();
	// Each lookup takes a while, so the second process decides while the first is still asking.
	emulator.setFaults({ latencyMs: 100 });
	try {
		await importFile(options, 'credentials', 'budget', [
			{ ...BUDGET_CREDENTIAL, type: 'dataGatewayApi', data: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, appCodePlacement: 'query', dailyBudgetYuan: 2 } },
		]);
		const ids = ['dgwBudgetOne', 'dgwBudgetTwo'];
		await importFile(options, 'workflow', 'budget-one', budgetWorkflow(options, ids[0] as string, ['京A50001', '京A50002'], barrier.url));
		await importFile(options, 'workflow', 'budget-two', budgetWorkflow(options, ids[1] as string, ['京B50003', '京B50004'], barrier.url));
		emulator.resetLedger();
		const outputs = await Promise.all(ids.map(async (id) => await execute(options, id)));
		assert.equal(barrier.arrivals(), PROCESSES, 'both executions waited at the barrier together');

		const billedCalls = emulator.ledger().byPath['/car/query']?.billedCalls ?? 0;
		const billedYuan = Math.round(billedCalls * DETAIL_PRICE * 100) / 100;
		assert.ok(billedYuan <= 2, `the gateway billed ${billedYuan} yuan over both processes, above the daily budget of 2.00`);
		assert.ok(billedCalls >= 1, 'the budget holds one vehicle detail: one of the four must be made');
		const items = outputs.flat();
		assert.equal(items.length, 4, `four items over both processes: ${JSON.stringify(items)}`);
		const refused = items.filter((item) => item.error !== undefined);
		const answered = items.length - refused.length;
		assert.equal(answered, billedCalls, `each answered item is one billed call (${answered} answered, ${billedCalls} billed)`);
		for (const item of refused) {
			assert.match(String(item.error), /Daily budget: .* above its daily budget of 2\.00 yuan \(1\.20 yuan spent; it resets at \d{4}-\d\d-\d\dT00:00:00\+08:00\)/, `a refused item names the budget: ${JSON.stringify(item)}`);
		}
		log(`shared daily budget 2.00, two processes at once, 4 vehicle details asked: ${billedCalls} billed (${billedYuan} yuan), ${refused.length} refused naming the budget`);
	} finally {
		emulator.clearFaults();
		emulator.resetLedger();
		await barrier.close();
	}
}
