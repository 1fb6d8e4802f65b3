import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();

function runSteps(steps: WorkflowStep[], credential: IDataObject = {}) {
	return runWorkflow({
		steps,
		items: [{}],
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, ...credential } },
	});
}

const detail = (carNumber: string): INodeParameters => ({ resource: 'vehicle', operation: 'getDetail', carNumber, carType: '02' });
const copyright = (keyword: string, extra: INodeParameters = {}): INodeParameters => ({ resource: 'copyright', operation: 'getAll', keyword, ...extra });

describe('a billed answer (code 0) whose data does not fit is counted, kept and output with a warning', () => {
	it('Get Vehicle Detail: the warning names the field, the data comes as sent, a second ask pays nothing, and the spend counts against the cap', async () => {
		emulator.setFaults({ sequence: [{ kind: 'misshapen', path: '/car/query' }] });
		const result = await runSteps(
			[
				{ name: 'First', type: vehicle, parameters: detail('京A12345') },
				{ name: 'Same question', type: vehicle, parameters: detail('京A12345') },
				// 1.2 yuan already spent + 1.2 for this one is above the cap of 2 yuan.
				{ name: 'Another plate', type: vehicle, parameters: detail('京B67890') },
			],
			{ maxSpendPerExecution: 2 },
		);
		const [first] = result.json('First');
		expect(first).toMatchObject({
			warning: expect.stringContaining('code 0, so the call took effect (and is billed'),
			warningField: 'data',
			data: expect.stringContaining('"vin"'),
			costYuan: 1.2,
		});
		expect(first.warning).toContain('expected object, received string');
		expect(result.json('Same question')).toEqual([{ ...first, costYuan: 0 }]);
		expect(emulator.ledger().byPath['/car/query']).toMatchObject({ calls: 1, billedCalls: 1 });
		expect(result.error?.message).toMatch(/Spending cap: .* 1\.2 yuan already spent/);
		expect(result.error?.node).toBe('Another plate');
	});

	it('Retry On Fail after a later item failed does not ask the misshapen answer again', async () => {
		// Item 1's answer is misshapen, item 2 fails once with a refusal the node does not retry itself.
		emulator.setFaults({ sequence: [{ kind: 'misshapen', path: '/car/query' }, { kind: '502', path: '/car/query' }] });
		const result = await runWorkflow({
			steps: [
				{
					name: 'Detail',
					type: vehicle,
					parameters: { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' },
					settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 },
				},
			],
			items: [{ plate: '京A12345' }, { plate: '京C11111' }],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxRetries: 0, maxConcurrent: 1 } },
		});
		expect(result.error).toBeUndefined();
		const [misshapen, good] = result.json();
		expect(misshapen.warning).toEqual(expect.any(String));
		expect(good.vin).toEqual(expect.any(String));
		// One billed call for each plate: the retry found the misshapen answer in the execution's memory.
		expect(emulator.ledger().byPath['/car/query']).toMatchObject({ billedCalls: 2 });
	});

	it('Copyright Get Many: the records before a misshapen page, then the page with a warning; both pages paid once', async () => {
		emulator.setFaults({ sequence: [{ kind: 'misshapen', path: '/enterprise/copyright', skip: 1 }] });
		const result = await runSteps([
			{ name: 'List', type: enterprise, parameters: copyright('many works', { returnAll: true }) },
			{ name: 'Again', type: enterprise, parameters: copyright('many works', { returnAll: true }) },
		]);
		const listed = result.json('List');
		expect(listed).toHaveLength(11);
		expect(listed[10]).toMatchObject({ pageIndex: 2, warning: expect.stringContaining('Get Enterprise Copyrights'), data: expect.any(String) });
		// Version 1.1 shares the two paid pages among the records: the column adds up to the bill.
		expect(listed.reduce((sum, item) => sum + Number(item.costYuan), 0)).toBeCloseTo(0.4, 6);
		// Each of the 11 items that reach it lists again, from the pages this execution already paid.
		expect(result.json('Again')).toHaveLength(11 * 11);
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 2, billedCalls: 2 });
	});
});

describe('a change the gateway made (code 0) with an answer that does not fit', () => {
	const createSignature = (settings: WorkflowStep['settings']) =>
		runWorkflow({
			steps: [
				{
					name: 'Create',
					type: new DataGatewaySms(),
					parameters: { resource: 'signature', operation: 'create', name: '={{ $json.name }}', remark: '验证码，网站 https://example.com' },
					settings,
				},
			],
			items: [{ name: '数据网关' }, { name: '网关数据' }],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxConcurrent: 1 } },
		});

	it('signature Create outputs the answer with a warning instead of an error', async () => {
		emulator.setFaults({ sequence: [{ kind: 'misshapen', path: '/sms/add_sign' }] });
		const result = await createSignature({});
		expect(result.error).toBeUndefined();
		const [made, other] = result.json();
		expect(made).toMatchObject({ warning: expect.stringContaining('Create Signature'), data: expect.stringContaining('数据网关') });
		expect(made.warning).toContain('the call took effect');
		expect(other).toMatchObject({ name: '网关数据', id: expect.any(String) });
	});

	it('Retry On Fail after a later item failed does not create the misshapen one again', async () => {
		emulator.setFaults({ sequence: [{ kind: 'misshapen', path: '/sms/add_sign' }, { kind: '500', path: '/sms/add_sign' }] });
		const result = await createSignature({ retryOnFail: true, maxTries: 2, waitBetweenTries: 0 });
		expect(result.error?.message).toMatch(/may or may not have been made/);
		expect(emulator.ledger().byPath['/sms/add_sign']?.calls).toBe(2);
	});
});

describe('copyright pages the gateway refused do not count against the spending cap', () => {
	it('a refused listing leaves the whole cap to the next node', async () => {
		const result = await runSteps(
			[
				{ name: 'Unknown company', type: enterprise, parameters: copyright('notfound 公司', { limit: 10 }), settings: { onError: 'continueRegularOutput' } },
				// Two pages of 0.2 yuan: exactly the cap, which the refused page above must not have used.
				{ name: 'Known company', type: enterprise, parameters: copyright('many works', { limit: 20 }) },
			],
			{ maxSpendPerExecution: 0.4 },
		);
		expect(result.json('Unknown company')).toEqual([expect.objectContaining({ gatewayCode: 20004 })]);
		expect(result.error).toBeUndefined();
		expect(result.json('Known company')).toHaveLength(20);
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 3, billedCalls: 2 });
	});
});
