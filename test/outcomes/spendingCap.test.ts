/**
 * Issue 25, item 1: the spending cap counts every attempt the gateway may have billed, so it is
 * never below the gateway's bill, and an attempt (a retry, the next node) that could pass the cap
 * is not made. The gateway here is the emulator, whose ledger is the bill.
 */
import fc from 'fast-check';
import type { IDataObject, IExecuteFunctions, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { enforceMemoryBounds, MEMORY_BOUNDS } from '../../nodes/shared/state/executionMemory';
import { forgetAllExecutionMemory, ledgerSpentYuan } from '../../nodes/shared/testing';
import type { Emulator, FaultKind } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();
const detail = (carNumber: string): INodeParameters => ({ resource: 'vehicle', operation: 'getDetail', carNumber, carType: '02' });
const continueOnFail: WorkflowStep['settings'] = { onError: 'continueRegularOutput' };

let executions = 0;

async function run(steps: WorkflowStep[], credential: IDataObject, items: IDataObject[] = [{}]) {
	const executionId = `spending-cap-${process.pid}-${++executions}`;
	const result = await runWorkflow({
		steps,
		items,
		executionId,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, ...credential } },
	});
	// What the cap counted in this execution, in the durable store.
	const spent = (await ledgerSpentYuan(executionId, emulator.url, emulator.demo.memberAppCode)).execution;
	return { result, spent, billed: emulator.ledger().totals.costYuan };
}

describe('an answer lost after the gateway billed it counts against the cap', () => {
	it('cap 1.5, vehicle detail (1.2) processed then reset: the retry that could bill 2.4 is not made, and the item says why', async () => {
		emulator.setFaults({ sequence: [{ kind: 'resetAfterBilling', path: '/car/query' }] });
		const { result, spent, billed } = await run([{ name: 'Detail', type: vehicle, parameters: detail('京A12345'), settings: continueOnFail }], { maxSpendPerExecution: 1.5 });
		const [item] = result.json();
		expect(item.error).toMatch(
			/^Get Vehicle Detail failed: the connection was closed by the gateway before it answered \(\w+\); not tried again: Spending cap: 1\.2 yuan more would bring this execution's spend with this credential to 2\.4 yuan, above the cap of 1\.5 yuan$/,
		);
		expect(item.errorDescription).toMatch(/^The gateway may have billed the attempt whose answer was lost, so it counts against the cap\./);
		expect(billed).toBe(1.2);
		expect(spent).toBe(1.2);
		expect(emulator.ledger().byPath['/car/query']).toMatchObject({ calls: 1, billedCalls: 1 });
	});

	it('two nodes: the first times out after the gateway billed it, so the second is refused before any call', async () => {
		emulator.setFaults({ sequence: [{ kind: 'hangAfterBilling', path: '/car/query' }] });
		const { result, spent, billed } = await run(
			[
				{ name: 'First', type: vehicle, parameters: detail('京A12345'), settings: continueOnFail },
				{ name: 'Second', type: vehicle, parameters: detail('京B67890') },
			],
			{ maxSpendPerExecution: 1.5, timeoutSeconds: 1 },
		);
		expect(result.json('First')[0].error).toBe('Get Vehicle Detail failed: no answer after 1 attempt over 1 s');
		expect(result.error?.node).toBe('Second');
		expect(result.error?.message).toMatch(/^Spending cap: .* with 1\.2 yuan already spent in this execution with this credential that is 2\.4 yuan, above the cap of 1\.5 yuan$/);
		expect(billed).toBe(1.2);
		expect(spent).toBe(1.2);
	});

	it("a listing page lost after billing: the page's retry is refused when it could pass the cap", async () => {
		emulator.setFaults({ sequence: [{ kind: 'resetAfterBilling', path: '/enterprise/copyright' }] });
		const { result, spent, billed } = await run(
			[{ name: 'List', type: enterprise, parameters: { resource: 'copyright', operation: 'getAll', keyword: 'many works', limit: 10 }, settings: continueOnFail }],
			{ maxSpendPerExecution: 0.3 },
		);
		expect(result.json()[0].error).toMatch(/not tried again: Spending cap: 0\.2 yuan more would bring this execution's spend with this credential to 0\.4 yuan, above the cap of 0\.3 yuan$/);
		expect(billed).toBe(0.2);
		expect(spent).toBe(0.2);
	});
});

/** Stands for a Wait node that holds the execution beyond the idle time: the process's sweep forgets its memory meanwhile. */
const idleHalfHour: INodeType = {
	description: { displayName: 'Idle', name: 'idleHalfHour', group: ['transform'], version: 1, description: 'the sweep after 30 min idle', defaults: { name: 'Idle' }, inputs: ['main'], outputs: ['main'], properties: [] },
	async execute(this: IExecuteFunctions) {
		enforceMemoryBounds(Date.now() + MEMORY_BOUNDS.idleMs + MEMORY_BOUNDS.sweepMs);
		return [this.getInputData()];
	},
};

describe('issue 33 item 6: the spend of an execution outlives the process memory', () => {
	it('a Wait beyond 30 min idle between two paid nodes (the sweep forgets the execution): the second node is refused by the cap', async () => {
		const { result, spent, billed } = await run(
			[
				{ name: 'First', type: vehicle, parameters: detail('京A12345') },
				{ name: 'Wait', type: idleHalfHour, parameters: {} },
				{ name: 'Second', type: vehicle, parameters: detail('京B67890') },
			],
			{ maxSpendPerExecution: 1.5 },
		);
		expect(result.error?.node).toBe('Second');
		expect(result.error?.message).toMatch(/^Spending cap: .* with 1\.2 yuan already spent in this execution with this credential that is 2\.4 yuan, above the cap of 1\.5 yuan$/);
		expect([billed, spent]).toEqual([1.2, 1.2]);
	});

	it('resumed on another worker (same execution id, no memory of it in that process): the cap still counts what the first worker paid', async () => {
		const executionId = `spending-cap-resumed-${process.pid}`;
		const credentials = { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxSpendPerExecution: 10 } };
		const step: WorkflowStep = { name: 'Detail', type: vehicle, parameters: { ...detail(''), carNumber: '={{ $json.plate }}' } };
		const plates = (prefix: string) => Array.from({ length: 8 }, (_, index) => ({ plate: `${prefix}${20001 + index}` }));
		const first = await runWorkflow({ steps: [step], items: plates('京A'), executionId, credentials });
		expect(first.error).toBeUndefined();
		// 8 × 1.2 = 9.6 yuan paid before the Wait; the execution resumes in a process that never saw it.
		forgetAllExecutionMemory();
		const after = await runWorkflow({ steps: [step], items: plates('京B'), executionId, credentials });
		expect(after.error?.message).toMatch(/^Spending cap: this node's paid calls are estimated at 9\.6 yuan .* with 9\.6 yuan already spent in this execution/);
		expect(emulator.ledger().totals.costYuan).toBeCloseTo(9.6, 6);
	});
});

describe('an attempt the gateway certainly did not bill gives its price back', () => {
	it("the gateway's own 500 refusal (code 500) is retried within a cap that holds one call", async () => {
		emulator.setFaults({ sequence: [{ kind: '500', path: '/car/query' }] });
		const { result, spent, billed } = await run([{ name: 'Detail', type: vehicle, parameters: detail('京A12345') }], { maxSpendPerExecution: 1.2 });
		expect(result.error).toBeUndefined();
		expect(result.json()[0]).toMatchObject({ costYuan: 1.2 });
		expect(emulator.ledger().byPath['/car/query']).toMatchObject({ calls: 2, billedCalls: 1 });
		expect([billed, spent]).toEqual([1.2, 1.2]);
	});

	it('a plate the gateway does not know (code != 0) leaves the cap to the next node', async () => {
		const { result, spent } = await run(
			[
				{ name: 'Unknown', type: vehicle, parameters: detail('京A404NF'), settings: continueOnFail },
				{ name: 'Known', type: vehicle, parameters: detail('京B67890') },
			],
			{ maxSpendPerExecution: 1.2 },
		);
		expect(result.json('Unknown')[0].gatewayCode).toEqual(expect.any(Number));
		expect(result.error).toBeUndefined();
		expect(spent).toBe(1.2);
	});
});

describe('property: whatever answers are lost, and where, the cap never counts below the bill, and the bill never passes the cap', () => {
	const LOOKUPS: Record<string, { parameters: (plate: string) => INodeParameters; price: number; type: INodeType }> = {
		'/car/query': { parameters: (plate: string): INodeParameters => detail(plate), price: 1.2, type: vehicle },
		'/luoz/query': { parameters: (plate: string): INodeParameters => ({ resource: 'violation', operation: 'query', carNumber: plate }), price: 0.04, type: vehicle },
		'/enterprise/detail_info': { parameters: (plate: string): INodeParameters => ({ resource: 'registration', operation: 'get', keyword: `${plate}公司` }), price: 0.35, type: enterprise },
		// One page of a listing per item: its pages count as they come.
		'/enterprise/copyright': { parameters: (plate: string): INodeParameters => ({ resource: 'copyright', operation: 'getAll', keyword: `${plate}公司`, limit: 10 }), price: 0.2, type: enterprise },
	};
	const FAULTS: FaultKind[] = ['resetAfterBilling', 'hangAfterBilling', 'reset', 'hang', '500', '502', 'truncated', 'malformed'];
	/** Each node asks about its own plates, so that both nodes call. */
	const PLATES = [
		['京A11111', '京A22222', '沪B33333', '粤B44444'],
		['粤BD55555', '浙A66666', '苏E77777', '鲁B88888'],
	];

	it('holds for random faults at random points, retries, caps and one or two nodes', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.record({
					path: fc.constantFrom(...Object.keys(LOOKUPS)),
					items: fc.integer({ min: 1, max: 4 }),
					nodes: fc.integer({ min: 1, max: 2 }),
					// Around what the items would cost without faults: some caps hold them all, some do not.
					capLeeway: fc.double({ min: -1.5, max: 2.5, noNaN: true }),
					maxRetries: fc.integer({ min: 0, max: 3 }),
					faults: fc.array(fc.record({ kind: fc.constantFrom(...FAULTS), skip: fc.integer({ min: 0, max: 4 }), count: fc.integer({ min: 1, max: 2 }) }), {
						minLength: 1,
						maxLength: 4,
					}),
				}),
				async ({ path, items, nodes, capLeeway, maxRetries, faults }) => {
					const lookup = LOOKUPS[path];
					emulator.reset();
					emulator.setFaults({ sequence: faults.map((fault) => ({ ...fault, path })) });
					const cap = Math.max(0.01, Math.round((items * nodes + capLeeway) * lookup.price * 100) / 100);
					const steps = Array.from({ length: nodes }, (_, index): WorkflowStep => ({
						name: `Node ${index + 1}`,
						type: lookup.type,
						parameters: lookup.parameters(`={{ $json.plate${index} }}`),
						settings: continueOnFail,
					}));
					const { spent, billed } = await run(
						steps,
						{ maxSpendPerExecution: cap, maxRetries, timeoutSeconds: 0.3, maxConcurrent: 3 },
						Array.from({ length: items }, (_, index) => ({ plate0: PLATES[0][index], plate1: PLATES[1][index] })),
					);
					expect(spent).toBeGreaterThanOrEqual(billed - 1e-9);
					expect(billed).toBeLessThanOrEqual(cap + 1e-9);
					expect(spent).toBeLessThanOrEqual(cap + 1e-9);
				},
			),
			{ numRuns: 50 },
		);
	}, 120_000);
});
