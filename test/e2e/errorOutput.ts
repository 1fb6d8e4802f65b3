/**
 * The error output inside real n8n: with Settings > On Error > "Continue (using error output)", a
 * lookup and an SMS Send with three items, the middle one failing, send that item down the Error
 * branch and the other two down Success. Judged from the run n8n prints (`n8n execute --rawOutput`).
 */
import assert from 'node:assert/strict';

import { n8nCommand } from '../../scripts/n8n-runtime';
import { codeVariable, sendParameters } from '../harness/sms';
import { importFile, manualStart, workflow, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

type Json = Record<string, unknown>;

/** The same setting as the money-safety checks: runtime, user folder, emulator, type prefix, credential. */
export type ErrorOutputOptions = MoneySafetyOptions;

/** Start -> the items -> the node under test, whose Success and Error outputs each lead to a No Op. */
function branchingWorkflow(id: string, items: Json[], node: Json): Json {
	const base = workflow(id, `Error output: ${id}`, manualStart, items, { ...node, name: 'Node', position: [660, 0], onError: 'continueErrorOutput' }, false);
	const to = (name: string) => [{ node: name, type: 'main', index: 0 }];
	return {
		...base,
		nodes: [
			...(base.nodes as Json[]),
			{ id: 'success', name: 'Success', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [880, -100], parameters: {} },
			{ id: 'failed', name: 'Failed', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [880, 100], parameters: {} },
		],
		connections: { ...(base.connections as Json), Node: { main: [to('Success'), to('Failed')] } },
	};
}

interface PrintedRun {
	status?: string;
	data?: { resultData?: { runData?: Record<string, Array<{ data?: { main?: Array<Array<{ json: Json; pairedItem?: unknown }> | null> } }>> } };
}

async function runBranching(options: ErrorOutputOptions, workflow: Json) {
	await importFile(options, 'workflow', String(workflow.id), workflow);
	const result = await n8nCommand(options.runtime, ['execute', `--id=${workflow.id}`, '--rawOutput'], options.environment);
	const text = `${result.stdout}\n${result.stderr}`;
	assert.equal(result.code, 0, `n8n execute ${workflow.id} failed:\n${text.slice(-3000)}`);
	const run = parsePrintedRun<PrintedRun>(result.stdout);
	assert.equal(run.status, 'success', `${workflow.id} ended ${run.status}`);
	const runData = run.data?.resultData?.runData ?? {};
	const itemsOf = (name: string) => runData[name]?.[0]?.data?.main?.[0] ?? [];
	assert.doesNotMatch(text, new RegExp(options.emulator.demo.appCode), 'the appCode appears nowhere in the printed run');
	return { success: itemsOf('Success'), failed: itemsOf('Failed') };
}

export async function checkErrorOutput(options: ErrorOutputOptions): Promise<void> {
	const { emulator, log } = options;
	const credentials = { dataGatewayApi: { id: options.credentialId, name: 'Data Gateway (emulator)' } };

	emulator.resetLedger();
	const lookup = await runBranching(
		options,
		branchingWorkflow(
			'dgwErrorOutputLookup',
			[{ keyword: '北京示例科技有限公司' }, { keyword: 'notfound 公司' }, { keyword: '上海示例贸易有限公司' }],
			{
				id: 'lookup',
				type: `${options.typePrefix}dataGatewayEnterprise`,
				typeVersion: 1,
				parameters: { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}' },
				credentials,
			},
		),
	);
	assert.deepEqual(
		lookup.success.map((item) => ((item.json.data as Json | undefined)?.name as string | undefined) ?? item.json.name),
		['北京示例科技有限公司', '上海示例贸易有限公司'],
		`lookup: two companies on Success, got ${JSON.stringify(lookup.success).slice(0, 500)}`,
	);
	assert.equal(lookup.failed.length, 1, `lookup: one item on Error, got ${JSON.stringify(lookup.failed).slice(0, 500)}`);
	assert.match(String(lookup.failed[0].json.error), /gateway code 20004/, 'the failed lookup names the gateway code');
	log('lookup with a failing middle item: 2 items on Success, 1 on Error');

	emulator.resetLedger();
	const sms = await runBranching(
		options,
		branchingWorkflow('dgwErrorOutputSms', [{ phone: '13900030001' }, { phone: '12345' }, { phone: '13900030003' }], {
			id: 'send',
			type: `${options.typePrefix}dataGatewaySms`,
			typeVersion: 1,
			parameters: sendParameters(emulator, { variables: codeVariable('4444') }),
			credentials,
		}),
	);
	assert.deepEqual(
		sms.success.map((item) => item.json.phone),
		['13900030001', '13900030003'],
		`SMS: the two sent items on Success, got ${JSON.stringify(sms.success).slice(0, 500)}`,
	);
	assert.equal(sms.failed.length, 1, `SMS: one item on Error, got ${JSON.stringify(sms.failed).slice(0, 500)}`);
	assert.match(String(sms.failed[0].json.error), /Item 2: Phone Number "12345"/, 'the failed item names the item and field');
	assert.equal(emulator.ledger().byPath['/sms/send']?.calls, 2, 'SMS: two sends, none for 12345');
	log('SMS Send with phone 12345 in the middle: 2 sent on Success, 1 on Error, 2 send calls');

	// From Enterprise and SMS 1.3 the failed item leaves without `.error`, as { error, message }, and n8n lays its input beneath.
	const keeps = await runBranching(
		options,
		branchingWorkflow('dgwErrorOutputKeepsInput', [{ keyword: 'notfound 公司', row: 7 }], {
			id: 'lookup13',
			type: `${options.typePrefix}dataGatewayEnterprise`,
			typeVersion: 1.3,
			parameters: { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}' },
			credentials,
		}),
	);
	const [keptLookup] = keeps.failed;
	assert.deepEqual(Object.keys(keptLookup?.json ?? {}).sort(), ['error', 'keyword', 'message', 'row'], `Enterprise 1.3: the failed item keeps its input, got ${JSON.stringify(keeps.failed).slice(0, 500)}`);
	assert.equal(keptLookup.json.keyword, 'notfound 公司');
	assert.match(String(keptLookup.json.error), /gateway code 20004/);
	emulator.resetLedger();
	const keptSms = await runBranching(
		options,
		branchingWorkflow('dgwErrorOutputSmsKeepsInput', [{ phone: '13900030011', name: 'Ann' }, { phone: '12345', name: 'Bob' }], {
			id: 'send13',
			type: `${options.typePrefix}dataGatewaySms`,
			typeVersion: 1.3,
			parameters: sendParameters(emulator, { variables: codeVariable('4455') }),
			credentials,
		}),
	);
	assert.deepEqual(keptSms.success.map((item) => item.json.phone), ['13900030011'], `SMS 1.3: one sent on Success, got ${JSON.stringify(keptSms.success).slice(0, 500)}`);
	assert.equal(keptSms.failed.length, 1, `SMS 1.3: one item on Error, got ${JSON.stringify(keptSms.failed).slice(0, 500)}`);
	const keptPhone = keptSms.failed[0].json;
	assert.deepEqual(Object.keys(keptPhone).sort(), ['error', 'message', 'name', 'phone'], `SMS 1.3: the failed item keeps its input, got ${JSON.stringify(keptPhone)}`);
	assert.deepEqual([keptPhone.phone, keptPhone.name], ['12345', 'Bob']);
	assert.match(String(keptPhone.error), /^Item 2: Phone Number "12345"/);
	assert.match(String(keptPhone.message), /No call was made/);
	log('Enterprise and SMS 1.3: the failed items on Error keep their input (keyword, phone) beside error and message');
}
