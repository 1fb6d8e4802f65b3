/**
 * Scenario 12 of `npm run test:e2e:queue` (in the cluster of test/e2e/queueMoney.ts): two credentials
 * with the emulator's two appCodes on one n8n (issue 33). The same lookup with Reuse Answers For,
 * one workflow per credential: each account pays its own call, and a repeat pays none. SMS Send with
 * a Reference, one workflow per credential, where the emulator gives both sends the same task id: the
 * report starts the SMS Trigger (which has no credential) without a reference, and each account's
 * Check Pending Deliveries outputs its own send with its own Reference (docs/delivery-reports.md).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

import { NODE_TYPE_PREFIX } from '../../scripts/n8n-runtime';
import type { Emulator } from '../emulator/server';
import { until, type QueueHarness } from './queueCluster';
import { log, postJson, type Item } from './queueScenarios';
import { gatewayCredential, GATEWAY_CAP_PER_SECOND, lookupWorkflow, triggerPath, triggerWorkflow } from './queueWorkflows';

const HOUR = 3_600_000;
export const ACCOUNTS_TRIGGER_ID = 'dgwQueueAccountsTrigger';
const ACCOUNTS = [
	{ name: 'A', credentialId: 'dgwQueueAccountA', phone: '13733000021', reference: 'ORDER-ACCOUNT-A' },
	{ name: 'B', credentialId: 'dgwQueueAccountB', phone: '13733000022', reference: 'ORDER-ACCOUNT-B' },
] as const;
type Account = (typeof ACCOUNTS)[number];
const path = (account: Account, what: string) => `dgw-account-${account.name}-${what}`.toLowerCase();
const workflowId = (account: Account, what: string) => `dgwAccount${account.name}${what}`;

/** The emulator's ledger names an account by the first 8 hex digits of its appCode's SHA-256 (test/emulator/server.ts). */
const ledgerLabel = (appCode: string) => createHash('sha256').update(appCode).digest('hex').slice(0, 8);
const appCodeOf = (emulator: Emulator, account: Account) => (account.name === 'A' ? emulator.demo.appCode : emulator.demo.memberAppCode);

export function accountCredentials(emulator: Emulator) {
	return ACCOUNTS.map((account) => gatewayCredential({ id: account.credentialId, gatewayUrl: emulator.url, appCode: appCodeOf(emulator, account), maxPerSecond: GATEWAY_CAP_PER_SECOND }));
}

function webhook(hookPath: string) {
	return {
		id: `${hookPath}-in`,
		name: 'In',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: `${hookPath}-hook`,
		parameters: { httpMethod: 'POST', path: hookPath, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
	};
}

/** Webhook -> one SMS node with `parameters` and the account's credential; answers with its items. */
function smsNodeWorkflow(account: Account, what: string, parameters: Record<string, unknown>) {
	return {
		id: workflowId(account, what),
		name: `Queue: account ${account.name} ${what}`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			webhook(path(account, what)),
			{
				id: 'sms',
				name: 'SMS',
				type: `${NODE_TYPE_PREFIX}dataGatewaySms`,
				typeVersion: 1.1,
				position: [220, 0],
				parameters,
				credentials: { dataGatewayApi: { id: account.credentialId, name: `Data Gateway (${account.credentialId})` } },
			},
		],
		connections: { In: { main: [[{ node: 'SMS', type: 'main', index: 0 }]] } },
	};
}

function reuseLookupWorkflow(account: Account) {
	const workflow = lookupWorkflow(workflowId(account, 'Reuse'), path(account, 'reuse'), account.credentialId);
	const [hook, split, node] = workflow.nodes;
	const identify = node as typeof node & { parameters: Record<string, unknown> };
	return { ...workflow, nodes: [hook, split, { ...identify, parameters: { ...identify.parameters, options: { reuseAnswersHours: 24 } } }] };
}

export function accountWorkflows(emulator: Emulator) {
	const signId = String(emulator.demo.signatureId);
	const templateId = String(emulator.demo.templateWithoutVariablesId);
	return [
		{ ...triggerWorkflow(ACCOUNTS_TRIGGER_ID), name: 'Queue: delivery reports of two accounts' },
		...ACCOUNTS.flatMap((account) => [
			reuseLookupWorkflow(account),
			smsNodeWorkflow(account, 'Send', { resource: 'message', operation: 'send', signId, templateId, phone: '={{ $json.body.phone }}', variablesInput: 'none', reference: '={{ $json.body.orderId }}' }),
			smsNodeWorkflow(account, 'Check', { resource: 'message', operation: 'checkPendingDeliveries', checkOptions: { minAgeMinutes: 0 } }),
		]),
	];
}

export const accountWorkflowIds = () => [ACCOUNTS_TRIGGER_ID, ...ACCOUNTS.flatMap((account) => ['Reuse', 'Send', 'Check'].map((what) => workflowId(account, what)))];
export const accountPaths = () => ACCOUNTS.flatMap((account) => ['reuse', 'send', 'check'].map((what) => path(account, what)));

async function post(harness: QueueHarness, hookPath: string, body: unknown): Promise<Item[]> {
	const answer = await postJson(`${harness.cluster.webhook.url}/webhook/${hookPath}`, body);
	assert.equal(answer.status, 200, `webhook/${hookPath} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
	return answer.body as Item[];
}

/** Calls to `apiPath` per account in the emulator's ledger. */
function callsBy(emulator: Emulator, apiPath: string, account: Account): number {
	const label = ledgerLabel(appCodeOf(emulator, account));
	return emulator.ledger().calls.filter((call) => call.path === apiPath && call.kind === 'call' && call.account === label).length;
}

async function answersKeptPerAccount(harness: QueueHarness, emulator: Emulator) {
	const phones = [{ phone: '13600136021' }];
	emulator.resetLedger();
	for (const round of [1, 2]) {
		for (const account of ACCOUNTS) {
			const items = await post(harness, path(account, 'reuse'), { phones });
			assert.deepEqual(items.map((item) => [item.error, item.reused]), [[undefined, round === 2]], `account ${account.name}, round ${round}: ${JSON.stringify(items).slice(0, 500)}`);
		}
		for (const account of ACCOUNTS) assert.equal(callsBy(emulator, '/telecom/identify', account), 1, `account ${account.name} paid its own call once (after round ${round})`);
	}
	log('12. the same lookup with Reuse Answers For on two accounts: each paid its own call, a repeat paid none');
}

async function reportsKeptPerAccount(harness: QueueHarness, emulator: Emulator) {
	const taskId = `T-SAME-${Date.now()}`;
	// Reports held until released, both sends given one task id, reports pushed to the webhook process.
	emulator.configure({ deliveryDelayMs: HOUR, nextTaskIds: [taskId, taskId], callbackUrl: `${harness.cluster.webhook.url}/${triggerPath}` });
	emulator.resetLedger();
	try {
		for (const account of ACCOUNTS) {
			const [sent] = await post(harness, path(account, 'send'), { phone: account.phone, orderId: account.reference });
			assert.deepEqual([sent.taskId, sent.reference], [taskId, account.reference], `account ${account.name}'s send: ${JSON.stringify(sent)}`);
			assert.equal(callsBy(emulator, '/sms/send', account), 1, `account ${account.name} sent once`);
		}
		emulator.finishPending('delivery', taskId);
		const runs = await until(async () => {
			const list = await harness.executions(ACCOUNTS_TRIGGER_ID);
			return list.length > 0 && list.every((run) => run.status === 'success') && list;
		}, "the trigger's execution of the report");
		for (const run of runs) {
			const detail = await (await fetch(`${harness.cluster.main.url}/rest/executions/${run.id}`, { headers: { cookie: harness.cookie } })).text();
			assert.ok(detail.includes(taskId), `trigger execution ${run.id} is the report of ${taskId}`);
			for (const account of ACCOUNTS) assert.ok(!detail.includes(account.reference), `a report two accounts share names neither Reference (execution ${run.id} names ${account.reference})`);
		}
		for (const account of ACCOUNTS) {
			const items = await post(harness, path(account, 'check'), {});
			const other = ACCOUNTS.find((each) => each !== account) as Account;
			assert.equal(items.length, 1, `account ${account.name}'s Check Pending Deliveries outputs its own send only: ${JSON.stringify(items).slice(0, 1000)}`);
			const [item] = items as Array<Item & { report?: { id?: unknown; phone?: unknown } }>;
			assert.deepEqual([item.reference, item.caughtUp, String(item.report?.id)], [account.reference, true, taskId], `account ${account.name}'s caught-up report: ${JSON.stringify(item)}`);
			assert.equal(String(item.report?.phone), account.phone, `account ${account.name}'s report is of its own number`);
			assert.ok(!JSON.stringify(item).includes(other.reference), `account ${account.name}'s item names no Reference of account ${other.name}`);
		}
		log(`12. two accounts given one task id: the report started the trigger ${runs.length} time(s) without a Reference, each account's Check Pending Deliveries output its own send with its own Reference`);
	} finally {
		emulator.configure({ deliveryDelayMs: 500, callbackUrl: undefined });
	}
}

export async function twoAccountsOnOneN8n(harness: QueueHarness, emulator: Emulator) {
	await answersKeptPerAccount(harness, emulator);
	await reportsKeptPerAccount(harness, emulator);
}
