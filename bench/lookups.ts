/** Runs a lookup node over many items through n8n-core's engine, as the workflow tests do. */
import type { ICredentialDataDecryptedObject, IDataObject } from 'n8n-workflow';

import { DataGatewayTelephone } from '../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { runWorkflow } from '../test/harness/workflow';

export interface LookupRun {
	ms: number;
	cpuMs: number;
	items: IDataObject[];
	failedItems: number;
}

export async function runLookups(kind: 'telephone' | 'violations', inputs: string[], credentials: ICredentialDataDecryptedObject): Promise<LookupRun> {
	const step =
		kind === 'telephone'
			? { name: 'Lookup', type: new DataGatewayTelephone(), parameters: { phoneNumber: '={{ $json.value }}' } }
			: { name: 'Lookup', type: new DataGatewayVehicle(), parameters: { resource: 'violation', operation: 'query', carNumber: '={{ $json.value }}' } };
	const cpuBefore = process.cpuUsage();
	const started = performance.now();
	const result = await runWorkflow({
		steps: [{ ...step, settings: { continueOnFail: true } }],
		items: inputs.map((value) => ({ value })),
		credentials: { dataGatewayApi: credentials },
	});
	const ms = performance.now() - started;
	const cpu = process.cpuUsage(cpuBefore);
	const items = result.json();
	if (result.error) throw new Error(`the lookup workflow failed: ${result.error.message}`);
	return { ms, cpuMs: (cpu.user + cpu.system) / 1000, items, failedItems: items.filter((item) => item.error !== undefined).length };
}
