/**
 * Jobs across executions inside real n8n: each `n8n execute` is its own process, so what one
 * execution keeps reaches the next only through the durable store (the SQLite file in n8n's user
 * folder, or Redis). Judged by the emulator's ledger and the executions' output.
 */
import assert from 'node:assert/strict';

import { n8nCommand } from '../../scripts/n8n-runtime';
import { importFile, itemsNode, manualStart, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

type Json = Record<string, unknown>;
const FREE_QUOTA_CREDENTIAL = { id: 'dgw-free-quota', name: 'Data Gateway (free telephone quota of 100)' };

/** Start -> the items -> one Data Gateway node. */
function lookupWorkflow(id: string, items: Json[], node: Json): Json {
	const to = (name: string) => [{ node: name, type: 'main', index: 0 }];
	return {
		id,
		name: id,
		active: false,
		nodes: [
			manualStart,
			itemsNode('Items', items),
			{ position: [440, 0], ...node, name: 'Lookup' },
		],
		connections: { Start: { main: [to('Items')] }, Items: { main: [to('Lookup')] } },
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

/** Runs a workflow in its own n8n process; returns the Lookup node's output items. */
async function execute(options: MoneySafetyOptions, id: string): Promise<Json[]> {
	const result = await n8nCommand(options.runtime, ['execute', `--id=${id}`, '--rawOutput'], options.environment);
	assert.equal(result.code, 0, `n8n execute ${id} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
	const run = parsePrintedRun<{ data: { resultData: { runData: Record<string, Array<{ data?: { main?: Array<Array<{ json: Json }>> } }>> } } }>(result.stdout);
	return (run.data.resultData.runData.Lookup?.[0]?.data?.main?.[0] ?? []).map((item) => item.json);
}

export async function checkAcrossExecutions(options: MoneySafetyOptions): Promise<void> {
	const { emulator, typePrefix, log } = options;
	const credential = { dataGatewayApi: { id: options.credentialId, name: 'Data Gateway' } };

	// 1. Reuse Answers For: the second execution, another process, pays nothing.
	const companies = ['跨执行甲有限公司', '跨执行乙有限公司', '跨执行丙有限公司'].map((company) => ({ company }));
	const registration = { id: 'lookup', type: `${typePrefix}dataGatewayEnterprise`, typeVersion: 1.2, credentials: credential, parameters: { resource: 'registration', operation: 'get', keyword: '={{ $json.company }}', options: { reuseAnswersHours: 24 } } };
	await importFile(options, 'workflow', 'reuse', lookupWorkflow('dgwAcrossReuse', companies, registration));
	emulator.resetLedger();
	const paid = await execute(options, 'dgwAcrossReuse');
	const reused = await execute(options, 'dgwAcrossReuse');
	assert.equal(emulator.ledger().byPath['/enterprise/detail_info']?.billedCalls, 3, 'three companies paid once, over two executions');
	assert.deepEqual(paid.map((company) => company.reused), [false, false, false]);
	assert.deepEqual(reused.map((company) => [company.reused, company.costYuan]), [[true, 0], [true, 0], [true, 0]], `the second execution reused every answer: ${JSON.stringify(reused).slice(0, 500)}`);
	log('reuse across executions: 3 paid calls, then 0');

	// 2. Only New Violations: a violation committed between two executions is the only one output.
	const plates = ['京A61001', '京A61002', '沪B62003', '粤B63004'].map((plate) => ({ plate }));
	const fleet = { id: 'lookup', type: `${typePrefix}dataGatewayVehicle`, typeVersion: 1.1, credentials: credential, parameters: { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', options: { onlyNewViolations: true } } };
	await importFile(options, 'workflow', 'fleet', lookupWorkflow('dgwAcrossFleet', plates, fleet));
	await execute(options, 'dgwAcrossFleet');
	emulator.configure({ addedViolations: { 沪B62003: 1 } });
	const news = await execute(options, 'dgwAcrossFleet');
	emulator.configure({ addedViolations: undefined });
	assert.deepEqual(news.map((plate) => [plate.plateNumber, (plate.violations as Json[]).length]), [['沪B62003', 1]], `only the new violation: ${JSON.stringify(news).slice(0, 500)}`);
	log('only new violations: the second execution output the one violation added in between');

	// 3. The free telephone quota, counted across executions: 60 + 45 identifications make 100 calls and refuse 5 before calling.
	await importFile(options, 'credentials', 'free-quota', [
		{ ...FREE_QUOTA_CREDENTIAL, type: 'dataGatewayApi', data: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, appCodePlacement: 'query', telephonePlan: 'freeQuota', telephoneDailyFreeCalls: 100 } },
	]);
	const numbers = (from: number, count: number) => Array.from({ length: count }, (_, index) => ({ phone: `137${String(from + index).padStart(8, '0')}` }));
	const identify = (id: string, items: Json[]) =>
		lookupWorkflow(id, items, { id: 'lookup', type: `${typePrefix}dataGatewayTelephone`, typeVersion: 1.2, continueOnFail: true, credentials: { dataGatewayApi: FREE_QUOTA_CREDENTIAL }, parameters: { phoneNumber: '={{ $json.phone }}' } });
	await importFile(options, 'workflow', 'quota-1', identify('dgwAcrossQuota1', numbers(0, 60)));
	await importFile(options, 'workflow', 'quota-2', identify('dgwAcrossQuota2', numbers(1000, 45)));
	emulator.resetLedger();
	await execute(options, 'dgwAcrossQuota1');
	const second = await execute(options, 'dgwAcrossQuota2');
	assert.equal(emulator.ledger().byPath['/telecom/identify']?.calls, 100, '100 identifications reached the gateway');
	const refused = second.filter((item) => typeof item.error === 'string');
	assert.equal(refused.length, 5, `5 refused before calling: ${JSON.stringify(refused).slice(0, 500)}`);
	assert.match(String(refused[0].error), /free telephone quota of 100 identifications a day is used up/);
	log('free telephone quota: 60 + 45 identifications in two executions, 100 calls, 5 refused before calling');
}
