/**
 * Send and Check Delivery over a batch, through n8n-core's engine: 30 numbers whose delivery the
 * gateway confirms 2 s after each send, polled every second. Ideal: the sends at once, then the
 * delivery delay and at most one poll interval, about 3 s.
 */
// The built package, as users run it (npm run bench builds first).
import { DataGatewaySms } from '../dist/nodes/DataGatewaySms/DataGatewaySms.node.js';
import { sendParameters } from '../test/harness/sms';
import { runWorkflow } from '../test/harness/workflow';
import type { EmulatorProcess } from './gateway';

export interface SendAndCheckResult {
	numbers: number;
	deliveryDelayMs: number;
	pollIntervalMs: number;
	idealMs: number;
	/** The SMS node's own execution time as n8n records it, and the whole workflow's wall time. */
	nodeMs: number;
	workflowMs: number;
	/** Between the first and the last send the gateway saw. */
	sendSpreadMs: number;
	/** Whether every send reached the gateway before its first status query. */
	sendsBeforePolls: boolean;
	delivered: number;
	statusQueries: number;
}

export async function sendAndCheckBench(emulator: EmulatorProcess, numbers = 30): Promise<SendAndCheckResult> {
	const deliveryDelayMs = 2000;
	const pollIntervalMs = 1000;
	await emulator.reset();
	await emulator.setFaults({});
	await emulator.configure({ deliveryDelayMs, deliveryFailureShare: 0 });
	const phones = Array.from({ length: numbers }, (_, index) => `1390002${String(1000 + index).padStart(4, '0')}`);
	const started = performance.now();
	const result = await runWorkflow({
		steps: [
			{
				name: 'SMS',
				type: new DataGatewaySms(),
				parameters: sendParameters(emulator, { operation: 'sendAndCheck', pollIntervalSeconds: pollIntervalMs / 1000, waitTimeoutSeconds: 60 }),
			},
		],
		items: phones.map((phone) => ({ phone })),
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } },
	});
	const workflowMs = performance.now() - started;
	if (result.error) throw new Error(`the Send and Check workflow failed: ${result.error.message}`);
	const nodeMs = result.run.data.resultData.runData.SMS?.[0]?.executionTime ?? Number.NaN;
	const calls = (await emulator.ledger()).calls.filter((call) => call.kind === 'call');
	const sends = calls.filter((call) => call.path === '/sms/send');
	const paths = calls.map((call) => call.path);
	return {
		numbers,
		deliveryDelayMs,
		pollIntervalMs,
		idealMs: deliveryDelayMs + pollIntervalMs,
		nodeMs,
		workflowMs,
		sendSpreadMs: Math.max(...sends.map((call) => call.at)) - Math.min(...sends.map((call) => call.at)),
		sendsBeforePolls: paths.lastIndexOf('/sms/send') < paths.indexOf('/sms/query_status'),
		delivered: result.json().filter((item) => item.outcome === 'delivered').length,
		statusQueries: paths.filter((path) => path === '/sms/query_status').length,
	};
}
