/** Runs a lookup node over many items through n8n-core's engine, as the workflow tests do. */
import type { ICredentialDataDecryptedObject, IDataObject, IExecuteFunctions, INodeExecutionData, INodeParameters, INodeType } from 'n8n-workflow';

// The built package, as users run it (npm run bench builds first). An extension-less path would
// resolve to the codex file X.node.json under tsx.
import { DataGatewayTelephone } from '../dist/nodes/DataGatewayTelephone/DataGatewayTelephone.node.js';
import { DataGatewayVehicle } from '../dist/nodes/DataGatewayVehicle/DataGatewayVehicle.node.js';
import { runWorkflow } from '../test/harness/workflow';
import { timeUsage } from './usageTime';

/**
 * Reads the same parameter per item and calls nothing: what n8n's engine costs without any gateway
 * work. `output` builds each item's output from the parameter (the memory section gives it the
 * Telephone node's output for that number, so that both hold the same data); else `{ phone }`.
 */
function engineOnlyNode(output?: (phone: string) => IDataObject): INodeType {
	return {
		description: {
			displayName: 'Engine Only',
			name: 'benchEngineOnly',
			group: ['transform'],
			version: 1,
			description: 'Reads a parameter per item',
			defaults: { name: 'Engine Only' },
			inputs: ['main'],
			outputs: ['main'],
			properties: [{ displayName: 'Phone Number', name: 'phoneNumber', type: 'string', default: '' }],
		} as unknown as INodeType['description'],
		async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
			return [
				this.getInputData().map((_, item) => {
					const phone = this.getNodeParameter('phoneNumber', item) as string;
					return { json: output ? output(phone) : { phone }, pairedItem: { item } };
				}),
			];
		},
	};
}

export interface LookupRun {
	/** Date.now() when the workflow started, on the same clock as the emulator's ledger. */
	startedAt: number;
	ms: number;
	/** The Lookup node's execution time as n8n records it. */
	nodeMs: number;
	cpuMs: number;
	/** The node's usage step (its counts and their one store update), wall time: bench/usageTime.ts. */
	usageMs: number;
	items: IDataObject[];
	failedItems: number;
}

/** `options`: the lookup node's Options collection (e.g. Reuse Answers For). */
/** `engineOutput`: what the engineOnly node outputs per item (see engineOnlyNode). */
export async function runLookups(
	kind: 'telephone' | 'violations' | 'engineOnly',
	inputs: string[],
	credentials: ICredentialDataDecryptedObject,
	options?: INodeParameters,
	engineOutput?: (phone: string) => IDataObject,
): Promise<LookupRun> {
	const extra = options ? { options } : {};
	const step =
		kind === 'violations'
			? { name: 'Lookup', type: new DataGatewayVehicle(), parameters: { resource: 'violation', operation: 'query', carNumber: '={{ $json.value }}', ...extra } }
			: { name: 'Lookup', type: kind === 'telephone' ? new DataGatewayTelephone() : engineOnlyNode(engineOutput), parameters: { phoneNumber: '={{ $json.value }}', ...extra } };
	const cpuBefore = process.cpuUsage();
	const startedAt = Date.now();
	const started = performance.now();
	let usageMs = Number.NaN;
	const usage = timeUsage();
	const result = await runWorkflow({
		steps: [{ ...step, settings: { continueOnFail: true } }],
		items: inputs.map((value) => ({ value })),
		credentials: { dataGatewayApi: credentials },
	}).finally(() => (usageMs = usage.stop()));
	const ms = performance.now() - started;
	const cpu = process.cpuUsage(cpuBefore);
	const items = result.json();
	if (result.error) throw new Error(`the lookup workflow failed: ${result.error.message}`);
	const nodeMs = result.run.data.resultData.runData.Lookup?.[0]?.executionTime ?? Number.NaN;
	return { startedAt, ms, nodeMs, cpuMs: (cpu.user + cpu.system) / 1000, usageMs, items, failedItems: items.filter((item) => item.error !== undefined).length };
}
