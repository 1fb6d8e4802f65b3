/**
 * `npm run test:e2e:queue-delivery` (after `npm run build`): a delivery report tied to its send in
 * n8n 2.41 queue mode. The send runs on a worker, its report reaches the SMS Trigger in the webhook
 * process, and the report carries the send's reference: both processes keep the delivery records in
 * n8n's queue Redis (database 0). The credential names a Shared Redis URL on another database (3),
 * where the send records go: the delivery records must not follow it, or no trigger could read them.
 */
import assert from 'node:assert/strict';

import { NODE_TYPE_PREFIX } from '../../scripts/n8n-runtime';
import { startEmulator } from '../emulator/server';
import { startedOn, startQueueHarness, until, type QueueHarness } from './queueCluster';
import { gatewayCredential, GATEWAY_CAP_PER_SECOND, MEMBER_CREDENTIAL_ID, triggerPath, triggerWorkflow } from './queueWorkflows';

const log = (text: string) => console.log(`[queue delivery ${new Date().toISOString().slice(11, 19)}] ${text}`);
const HOUR = 3_600_000;
const TRIGGER_ID = 'dgwQueueDeliveryTrigger';
const SEND = { id: 'dgwQueueSendWithReference', path: 'dgw-send-with-reference' };

/** POST {phone, orderId}: the SMS node sends the template without variables with the order as Reference and answers with its output. */
function sendWithReferenceWorkflow(signId: number, templateId: number) {
	return {
		id: SEND.id,
		name: 'Queue: SMS send with a reference',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'in',
				name: 'Order In',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: `${SEND.path}-hook`,
				parameters: { httpMethod: 'POST', path: SEND.path, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
			},
			{
				id: 'send',
				name: 'Send',
				type: `${NODE_TYPE_PREFIX}dataGatewaySms`,
				typeVersion: 1.1,
				position: [220, 0],
				parameters: { resource: 'message', operation: 'send', signId: String(signId), templateId: String(templateId), phone: '={{ $json.body.phone }}', variablesInput: 'none', reference: '={{ $json.body.orderId }}' },
				credentials: { dataGatewayApi: { id: MEMBER_CREDENTIAL_ID, name: `Data Gateway (${MEMBER_CREDENTIAL_ID})` } },
			},
		],
		connections: { 'Order In': { main: [[{ node: 'Send', type: 'main', index: 0 }]] } },
	};
}

async function main() {
	const started = Date.now();
	const emulator = await startEmulator({ reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 });
	let harness: QueueHarness | undefined;
	let passed = false;
	try {
		const trigger = { ...triggerWorkflow(TRIGGER_ID), name: 'Queue: delivery reports with their reference' };
		harness = await startQueueHarness(
			{
				credentials: (redis) => [gatewayCredential({ gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND, sharedLimitRedisUrl: `${redis.url}/3` })],
				workflows: [trigger, sendWithReferenceWorkflow(Number(emulator.demo.signatureId), Number(emulator.demo.templateWithoutVariablesId))],
				publish: [TRIGGER_ID, SEND.id],
				workers: 1,
			},
			log,
		);
		const { webhook, main: mainProcess, workers } = harness.cluster;
		log(`queue mode up in ${Math.round((Date.now() - started) / 1000)} s`);
		emulator.configure({ callbackUrl: `${webhook.url}/${triggerPath}` });

		const before = workers[0].log().length;
		const reference = `ORDER-${Date.now()}`;
		const response = await fetch(`${webhook.url}/webhook/${SEND.path}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ phone: '13733000001', orderId: reference }),
		});
		assert.equal(response.status, 200, `the send answered ${response.status}`);
		const [sent] = (await response.json()) as Array<{ taskId: string; reference: string }>;
		assert.equal(sent.reference, reference);
		assert.equal(startedOn(workers[0].log().slice(before)).length, 1, 'the send ran on the worker');
		log(`sent on the worker with Reference ${reference} (task ${sent.taskId})`);

		emulator.finishPending('delivery', sent.taskId);
		const [execution] = await until(async () => {
			const list = await harness!.executions(TRIGGER_ID);
			return list.length > 0 && list.every((run) => run.status === 'success') && list;
		}, "the trigger's execution of the report");
		const detail = await fetch(`${mainProcess.url}/rest/executions/${execution.id}`, { headers: { cookie: harness.cookie } });
		assert.ok((await detail.text()).includes(reference), "the report's item carries the reference of the send made on the worker");
		log('the report reaching the webhook process carried the reference of the send made on the worker');
		passed = true;
		log(`passed in ${Math.round((Date.now() - started) / 1000)} s`);
	} finally {
		await harness?.stop({ keepLogs: !passed });
		await emulator.close();
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
