/**
 * A separate OS process that runs one SMS Send workflow through n8n-core (as `n8n execute` does),
 * for the test of two processes racing on one SQLite store: `smsSender.ts <emulator URL>
 * <appCode> <signId> <templateId> <code> <phone,phone,…>`. The store file is DATA_GATEWAY_STORE_FILE.
 * Prints "ready", waits for a line on stdin, runs, prints each item's outcome as one JSON line.
 */
import { createInterface } from 'node:readline';

import { join } from 'node:path';

import type { INodeType } from 'n8n-workflow';
import { codeVariable, sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

const [url, appCode, signatureId, templateId, code, phones] = process.argv.slice(2);

(async () => {
	process.stdout.write('ready\n');
	const lines = createInterface({ input: process.stdin });
	await new Promise<void>((resolve) => lines.once('line', () => resolve()));
	lines.close();
	// By its full name: outside jest, a path ending in ".node" would be taken for a native addon.
	const { DataGatewaySms } = (await import(join(__dirname, '..', '..', 'nodes', 'DataGatewaySms', 'DataGatewaySms.node.ts'))) as { DataGatewaySms: new () => INodeType };
	const result = await runWorkflow({
		steps: [
			{
				name: 'SMS',
				type: new DataGatewaySms(),
				parameters: sendParameters({ demo: { signatureId, templateId } }, { variables: codeVariable('={{ $json.code }}'), sendOptions: { perMinute: 10, perHour: 10 } }),
				settings: { continueOnFail: true },
			},
		],
		items: phones.split(',').map((phone) => ({ phone, code })),
		credentials: { dataGatewayApi: { appCodeSecret: appCode, baseUrl: url } },
	});
	if (result.error) throw result.error;
	process.stdout.write(`${JSON.stringify(result.json())}\n`);
})().catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
	process.exit(1);
});
