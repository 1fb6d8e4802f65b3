/**
 * Money and message safety inside real n8n, judged by the emulator's ledger: a Loop Over Items
 * loop sends once per run, a failed execution retried through n8n's REST API does not send its
 * sent items again, the repeat record survives a restart of n8n, and an over-cap batch pays nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { activateWorkflow, n8nCommand, setupOwner, startN8n, type N8nEnvironment, type Runtime } from '../../scripts/n8n-runtime';
import type { Emulator } from '../emulator/server';
import { codeVariable, sendParameters } from '../harness/sms';

/** The same owner as the rest of the suite, so its own login later finds it. */
const OWNER = { email: 'e2e@example.com', password: 'E2e-Password-1', firstName: 'E2E', lastName: 'Check' };
const CAPPED_CREDENTIAL = { id: 'dgw-money-capped', name: 'Data Gateway (capped at 0.05 yuan)' };
const RETRY_PATH = 'dgw-money-retry';

type Json = Record<string, unknown>;

export interface MoneySafetyOptions {
	runtime: Runtime;
	environment: N8nEnvironment;
	emulator: Emulator;
	/** How n8n names this package's node types: `CUSTOM.` for custom extensions, `n8n-nodes-data-gateway.` as a community package. */
	typePrefix: string;
	/** The id of an imported credential that points at the emulator. */
	credentialId: string;
	log: (text: string) => void;
}

const accepted = (emulator: Emulator) => emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call' && call.code === 0).length;
const sendRequests = (emulator: Emulator) => emulator.ledger().byPath['/sms/send']?.calls ?? 0;

function smsNode(options: MoneySafetyOptions, credential: { id: string; name: string }, extra: Json = {}): Json {
	return {
		id: 'sms',
		name: 'Send',
		type: `${options.typePrefix}dataGatewaySms`,
		typeVersion: 1,
		position: [880, 0],
		parameters: sendParameters(options.emulator, { variables: codeVariable('={{ $json.code }}'), sendOptions: { perMinute: 10, perHour: 10 } }),
		credentials: { dataGatewayApi: credential },
		...extra,
	};
}

/** Start -> a list of items -> (loop ->) Send. */
export function workflow(id: string, name: string, start: Json, items: Json[], send: Json, loop: boolean): Json {
	const nodes: Json[] = [
		start,
		{
			id: 'list',
			name: 'List',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [220, 0],
			parameters: { assignments: { assignments: [{ id: 'a1', name: 'list', value: JSON.stringify(items), type: 'array' }] }, options: {} },
		},
		{ id: 'split', name: 'Split', type: 'n8n-nodes-base.splitOut', typeVersion: 1, position: [440, 0], parameters: { fieldToSplitOut: 'list', options: {} } },
		send,
	];
	const to = (node: string) => [{ node, type: 'main', index: 0 }];
	const connections: Json = { [start.name as string]: { main: [to('List')] }, List: { main: [to('Split')] } };
	if (loop) {
		nodes.push({ id: 'loop', name: 'Loop', type: 'n8n-nodes-base.splitInBatches', typeVersion: 3, position: [660, 0], parameters: { batchSize: 1, options: {} } });
		connections.Split = { main: [to('Loop')] };
		connections.Loop = { main: [[], to(send.name as string)] };
		connections[send.name as string] = { main: [to('Loop')] };
	} else {
		connections.Split = { main: [to(send.name as string)] };
	}
	return { id, name, active: false, nodes, connections, settings: { executionOrder: 'v1' }, pinData: {} };
}

export const manualStart = { id: 'start', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} };
/** A Code node that outputs these items, next after `manualStart`. */
export const itemsNode = (name: string, items: Json[]) => ({
	id: name.toLowerCase(),
	name,
	type: 'n8n-nodes-base.code',
	typeVersion: 2,
	position: [220, 0],
	parameters: { jsCode: `return ${JSON.stringify(items.map((json) => ({ json })))};` },
});
/** Start -> the items -> one node, named `name` (its id the name in lower case). */
export function oneNodeWorkflow(id: string, items: Json[], node: Json, name = 'Node'): Json {
	const to = (target: string) => [{ node: target, type: 'main', index: 0 }];
	return {
		id,
		name: id,
		active: false,
		nodes: [manualStart, itemsNode('Items', items), { id: name.toLowerCase(), position: [440, 0], ...node, name }],
		connections: { Start: { main: [to('Items')] }, Items: { main: [to(name)] } },
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

const webhookStart = {
	id: 'start',
	name: 'Start',
	type: 'n8n-nodes-base.webhook',
	typeVersion: 2,
	position: [0, 0],
	webhookId: '5a1f0c3e-2b7d-4c9a-8e61-0d4b3a2c1f10',
	parameters: { httpMethod: 'POST', path: RETRY_PATH, responseMode: 'onReceived', options: {} },
};

/** Imports a workflow or credentials file with n8n's CLI. */
export async function importFile(options: Pick<MoneySafetyOptions, 'runtime' | 'environment'>, kind: 'workflow' | 'credentials', name: string, content: unknown) {
	const folder = join(options.environment.userFolder, 'money-safety');
	mkdirSync(folder, { recursive: true });
	const file = join(folder, `${name}.json`);
	writeFileSync(file, JSON.stringify(content));
	const result = await n8nCommand(options.runtime, [`import:${kind}`, `--input=${file}`], options.environment);
	assert.equal(result.code, 0, `n8n import:${kind} ${name} failed:\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await read();
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((done) => setTimeout(done, 250));
	}
}

async function executionsOf(url: string, cookie: string, workflowId: string): Promise<Array<{ id: string; status: string; retryOf?: string | null }>> {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const response = await fetch(`${url}/rest/executions?filter=${filter}`, { headers: { cookie } });
	assert.ok(response.ok, `GET /rest/executions answered ${response.status}`);
	const body = (await response.json()) as { data?: { results?: Array<{ id: string; status: string; retryOf?: string | null }> } };
	return body.data?.results ?? [];
}

export async function checkMoneySafety(options: MoneySafetyOptions): Promise<void> {
	const { runtime, environment, emulator, log } = options;
	const credential = { id: options.credentialId, name: 'Data Gateway (emulator)' };
	// The gateway's own per-number limits are not under test: the node's repeat window and records are.
	const gatewayLimits = emulator.config().smsLimits;
	emulator.configure({ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });
	try {
		// 1. A Loop Over Items loop of 2 runs, both carrying the identical item: 2 messages.
		const loop = workflow('dgwMoneyLoop', 'Money safety: loop', manualStart, [{ phone: '13900020001', code: '1111' }, { phone: '13900020001', code: '1111' }], smsNode(options, credential), true);
		await importFile(options, 'workflow', 'loop', loop);
		emulator.resetLedger();
		const looped = await n8nCommand(runtime, ['execute', '--id=dgwMoneyLoop', '--rawOutput'], environment);
		assert.equal(looped.code, 0, `loop workflow failed:\n${looped.stdout.slice(-3000)}\n${looped.stderr.slice(-2000)}`);
		assert.equal(accepted(emulator), 2, 'a loop of 2 runs with identical items sends 2 messages');
		log('loop of 2 runs with identical items: 2 messages');

		// 2. Over the cap: 3 messages estimated at 0.105 yuan against a 0.05 cap, no paid call.
		await importFile(options, 'credentials', 'capped', [
			{ ...CAPPED_CREDENTIAL, type: 'dataGatewayApi', data: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, appCodePlacement: 'query', maxSpendPerExecution: 0.05 } },
		]);
		const capped = workflow(
			'dgwMoneyCap',
			'Money safety: cap',
			manualStart,
			[1, 2, 3].map((n) => ({ phone: `1390002100${n}`, code: '2222' })),
			smsNode(options, CAPPED_CREDENTIAL),
			false,
		);
		await importFile(options, 'workflow', 'cap', capped);
		emulator.resetLedger();
		const overCap = await n8nCommand(runtime, ['execute', '--id=dgwMoneyCap', '--rawOutput'], environment);
		const overCapText = `${overCap.stdout}\n${overCap.stderr}`;
		assert.match(overCapText, /estimated at 0\.105 yuan .*above the cap of 0\.05 yuan/, `the error names estimate and cap:\n${overCapText.slice(-3000)}`);
		assert.equal(sendRequests(emulator), 0, 'an over-cap batch makes no paid call');
		log('over-cap batch: 0 paid calls, error names 0.105 and 0.05 yuan');

		// 3. A failed execution, retried through n8n's REST API, then the same request after a restart.
		const items = [1, 2, 3].map((n) => ({ phone: `1390002200${n}`, code: '3333' }));
		const retry = workflow('dgwMoneyRetry', 'Money safety: retry', webhookStart, items, smsNode(options, credential), false);
		await importFile(options, 'workflow', 'retry', retry);
		await activateWorkflow(runtime, 'dgwMoneyRetry', environment);
		emulator.resetLedger();
		// Items 1 and 2 are accepted, item 3 meets a 429: certainly not sent, and the execution fails.
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/send', skip: 2, retryAfterSeconds: 0 }] });
		const path = `webhook/${RETRY_PATH}`;
		let n8n = await startN8n(runtime, { ...environment, webhookPaths: [path] });
		try {
			const cookie = await setupOwner(n8n.url, OWNER);
			assert.equal((await fetch(`${n8n.url}/${path}`, { method: 'POST' })).status, 200);
			const failed = await until(async () => (await executionsOf(n8n.url, cookie, 'dgwMoneyRetry')).find((execution) => execution.status === 'error'), 60_000, 'the failed execution');
			assert.equal(accepted(emulator), 2, 'items 1 and 2 were sent before the failure');
			emulator.clearFaults();

			const retried = await fetch(`${n8n.url}/rest/executions/${failed.id}/retry`, {
				method: 'POST',
				headers: { cookie, 'content-type': 'application/json' },
				body: JSON.stringify({ loadWorkflow: false }),
			});
			assert.ok(retried.ok, `retry answered ${retried.status}: ${await retried.clone().text()}`);
			const retry = ((await retried.json()) as { data?: { status?: string } }).data;
			assert.equal(retry?.status, 'success', `the retried execution succeeded: ${JSON.stringify(retry).slice(0, 500)}`);
			assert.equal(accepted(emulator), 3, 'the retry sent only item 3');
			assert.equal(sendRequests(emulator), 4, 'items 1 and 2 were sent once, item 3 refused once and sent once');
			log('failed execution retried through the REST API: sent items 0 more times, item 3 once');
		} finally {
			await n8n.stop();
		}

		// The same request again after a restart: every message is a repeat, nothing is sent.
		n8n = await startN8n(runtime, { ...environment, webhookPaths: [path] });
		try {
			const cookie = await setupOwner(n8n.url, OWNER);
			const before = (await executionsOf(n8n.url, cookie, 'dgwMoneyRetry')).length;
			assert.equal((await fetch(`${n8n.url}/${path}`, { method: 'POST' })).status, 200);
			const again = await until(
				async () => {
					const executions = await executionsOf(n8n.url, cookie, 'dgwMoneyRetry');
					return executions.length > before && executions.every((execution) => execution.status !== 'running' && execution.status !== 'new') ? executions : undefined;
				},
				60_000,
				'the execution after the restart',
			);
			assert.equal(again[0]?.status, 'success', `the execution after the restart succeeded: ${JSON.stringify(again[0])}`);
			assert.equal(sendRequests(emulator), 4, 'after a restart the repeat records still hold: no send');
			log('after an n8n restart: the same messages skipped as repeats, 0 sends');
		} finally {
			await n8n.stop();
		}
	} finally {
		emulator.clearFaults();
		emulator.configure({ smsLimits: gatewayLimits });
		emulator.resetLedger();
	}
}
