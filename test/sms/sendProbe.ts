/**
 * Run by deliveryReports.test.ts in a process of its own, as another n8n process (a queue-mode
 * worker, `n8n execute`) would send: one SMS Send workflow with a Reference, against the emulator
 * at PROBE_GATEWAY_URL, with the store this process finds (DATA_GATEWAY_STORE_FILE, or memory on a
 * Node started with --no-experimental-sqlite). Prints the output items and the hints as one JSON line.
 */
import { join } from 'node:path';

import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

const setting = (name: string) => {
	const value = process.env[name];
	if (!value) throw new Error(`${name} is not set`);
	return value;
};

/** By its file name: tsx resolves `DataGatewaySms.node` to the codex file DataGatewaySms.node.json. */
const NODE_FILE = join(__dirname, '..', '..', 'nodes', 'DataGatewaySms', 'DataGatewaySms.node.ts');

(async () => {
	const { DataGatewaySms } = (await import(NODE_FILE)) as typeof import('../../nodes/DataGatewaySms/DataGatewaySms.node');
	const result = await runWorkflow({
		steps: [{ name: 'SMS', type: new DataGatewaySms(), parameters: sendParameters({ demo: { signatureId: setting('PROBE_SIGNATURE_ID'), templateId: setting('PROBE_TEMPLATE_ID') } }, { sendOptions: { reference: setting('PROBE_REFERENCE') } }) }],
		items: [{ phone: setting('PROBE_PHONE') }],
		executionId: 'probe-execution',
		credentials: { dataGatewayApi: { appCodeSecret: setting('PROBE_APP_CODE'), baseUrl: setting('PROBE_GATEWAY_URL') } },
	});
	const hints = (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => hint.message);
	process.stdout.write(`${JSON.stringify({ items: result.json(), hints, error: result.error?.message })}\n`);
})().catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
	process.exit(1);
});
