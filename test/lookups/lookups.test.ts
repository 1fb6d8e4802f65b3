import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { startEmulator, type Emulator } from '../emulator/server';
import { runWorkflow, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
beforeAll(async () => {
	emulator = await startEmulator();
});
afterAll(async () => await emulator.close());
beforeEach(() => emulator.reset());

const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();
const telephone = new DataGatewayTelephone();

function run(type: INodeType, parameters: INodeParameters, items: IDataObject[], settings: WorkflowStep['settings'] = {}) {
	return runWorkflow({
		steps: [{ name: 'Lookup', type, parameters, settings }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url } },
	});
}

const pairedItems = (result: Awaited<ReturnType<typeof run>>) => result.items().map((item) => item.pairedItem);

describe('every operation', () => {
	it('Vehicle › Violation › Get Support Rules lists the rules of a prefix', async () => {
		const result = await run(vehicle, { resource: 'violation', operation: 'getSupportRules', preCarNum: '粤' }, [{}]);
		expect(result.error).toBeUndefined();
		expect(result.json()).toEqual([expect.objectContaining({ preCarNum: '粤', province: '广东', carEngineLen: expect.any(Number) })]);
	});

	it('Vehicle › Violation › Query returns the records, and Simplify adds numbers and ISO times', async () => {
		const parameters = { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', carEngineCode: '123456', carType: '02' };
		const raw = await run(vehicle, parameters, [{ plate: ' 京a 12345 ' }]);
		const [answer] = raw.json();
		expect(answer).toMatchObject({ carNumber: '京A12345', carEngineCode: '123456', count: expect.any(String) });
		const simple = await run(vehicle, { ...parameters, simplify: true }, [{ plate: '京A12345' }]);
		const [simplified] = simple.json() as Array<{ count: number; createDateStrIso: string; records: IDataObject[] }>;
		expect(simplified.count).toBe(Number(answer.count));
		expect(simplified.createDateStrIso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/);
		for (const record of simplified.records) expect(record.timeIso).toMatch(/\+08:00$/);
	});

	it('Vehicle › Vehicle › Get Detail returns the masked record of a new-energy plate', async () => {
		const result = await run(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD12345', carType: '52', simplify: true }, [{}]);
		const [detail] = result.json();
		expect(detail.vin).toContain('*');
		expect(detail.plateNumber).toContain('*');
		expect(detail.firstIssueDateIso).toMatch(/\+08:00$/);
		expect(typeof detail.passengers).toBe('number');
	});

	it('Enterprise › Registration › Get returns the nested record, and Simplify flattens it', async () => {
		const parameters = { resource: 'registration', operation: 'get', keyword: '北京示例科技有限公司' };
		const [raw] = (await run(enterprise, parameters, [{}])).json() as Array<{ sign: string; data: IDataObject }>;
		expect(raw.data).toMatchObject({ name: '北京示例科技有限公司', term_end: '-' });
		const [flat] = (await run(enterprise, { ...parameters, simplify: true }, [{}])).json();
		expect(flat).toMatchObject({ name: '北京示例科技有限公司', term_end: null, end_date: null, sign: raw.sign });
		expect(flat.address).toEqual(raw.data.address);
		expect(Array.isArray(flat.branches)).toBe(true);
		expect(flat.data).toBeUndefined();
	});

	it('Enterprise › Copyright › Get Many with Return All reads every page: 47 records, 5 paid pages', async () => {
		const result = await run(enterprise, { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: true }, [{}]);
		expect(result.json()).toHaveLength(47);
		expect(new Set(result.json().map((record) => record.RegisterNo)).size).toBe(47);
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 5, billedCalls: 5 });
		expect(pairedItems(result).every((paired) => (paired as { item: number }).item === 0)).toBe(true);
	});

	it('Enterprise › Copyright › Get Many with a Limit stops paying once it has enough', async () => {
		const result = await run(enterprise, { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: false, limit: 15, simplify: true }, [{}]);
		expect(result.json()).toHaveLength(15);
		expect(result.json()[0].RegisterDateIso).toMatch(/\+08:00$/);
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 2, billedCalls: 2 });
	});

	it('Telephone identifies mobile and landline numbers, and Simplify adds a flag and plain text', async () => {
		const result = await run(telephone, { phoneNumber: '={{ $json.phone }}', simplify: true }, [{ phone: '+86 138-0013-8000' }, { phone: '010-12345678' }]);
		const [mobile, landline] = result.json();
		expect(mobile).toMatchObject({ phone: '13800138000', isFlagged: expect.any(Boolean) });
		expect(landline.phone).toBe('01012345678');
		if (mobile.isFlagged) expect(mobile.countDescText).not.toMatch(/</);
	});
});

describe('input checks cost nothing', () => {
	const cases: Array<[string, INodeType, INodeParameters, RegExp]> = [
		['plate format', vehicle, { resource: 'violation', operation: 'query', carNumber: 'AB12345' }, /Item 1: Plate Number "AB12345" is not a plate number/],
		['short plate', vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '京A123', carType: '02' }, /Plate Number/],
		['engine tail', vehicle, { resource: 'violation', operation: 'query', carNumber: '京A12345', carEngineCode: '12-34*' }, /Engine Number Tail/],
		['frame tail', vehicle, { resource: 'violation', operation: 'query', carNumber: '京A12345', carCode: '中文' }, /Frame Number Tail/],
		['violation vehicle type', vehicle, { resource: 'violation', operation: 'query', carNumber: '京A12345', carType: '={{ "99" }}' }, /Vehicle Type "99" is not one of the codes 01, 02/],
		['detail vehicle type', vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '京A12345', carType: '={{ "03" }}' }, /Vehicle Type "03" is not one of the codes 01, 02, 51, 52/],
		['phone format', telephone, { phoneNumber: '12345' }, /Phone Number "12345" is neither a mobile number/],
		['empty phone', telephone, { phoneNumber: '  ' }, /Phone Number is empty/],
		['empty keyword', enterprise, { resource: 'registration', operation: 'get', keyword: '   ' }, /Keyword is empty/],
		['empty copyright keyword', enterprise, { resource: 'copyright', operation: 'getAll', keyword: '={{ $json.name ?? "" }}' }, /Keyword is empty/],
		['copyright page size', enterprise, { resource: 'copyright', operation: 'getAll', keyword: 'x', options: { pageSize: 0 } }, /Page Size/],
	];

	it.each(cases)('%s: a clear error naming the item and field, and 0 calls', async (_name, type, parameters, message) => {
		const result = await run(type, parameters, [{}]);
		expect(result.error?.message).toMatch(message);
		expect(result.error?.description).toMatch(/No call was made to the gateway/);
		expect(emulator.ledger().totals.calls).toBe(0);
	});

	it('one bad item stops the batch before any paid call', async () => {
		const result = await run(vehicle, { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}' }, [
			{ plate: '京A12345' },
			{ plate: '京A12346' },
			{ plate: 'nonsense' },
		]);
		expect(result.error?.message).toMatch(/^Item 3: Plate Number/);
		expect(emulator.ledger().totals.calls).toBe(0);
	});
});

describe('batches', () => {
	it('Continue On Fail keeps order and pairedItem with mixed good and bad items', async () => {
		const result = await run(
			enterprise,
			{ resource: 'registration', operation: 'get', keyword: '={{ $json.name }}' },
			[{ name: '甲公司' }, { name: '' }, { name: '不存在的公司' }, { name: '乙公司' }],
			{ continueOnFail: true },
		);
		const output = result.json();
		expect(output).toHaveLength(4);
		expect(pairedItems(result)).toEqual([0, 1, 2, 3].map((item) => ({ item })));
		expect((output[0].data as IDataObject).name).toBe('甲公司');
		expect(output[1].error).toMatch(/Item 2: Keyword is empty/);
		expect(output[2].error).toMatch(/^Get Enterprise Detail failed: gateway code \d+: no enterprise matches the keyword/);
		expect(output[2].gatewayCode).toEqual(expect.any(Number));
		expect((output[3].data as IDataObject).name).toBe('乙公司');
		expect(emulator.ledger().byPath['/enterprise/detail_info']).toMatchObject({ calls: 3, billedCalls: 2 });
	});

	it('asks once per distinct question: 12 items with 3 distinct plates are 3 billed calls', async () => {
		const plates = ['京A11111', '沪B22222', '粤BD33333'];
		const items = Array.from({ length: 12 }, (_, index) => ({ plate: plates[index % 3], row: index }));
		const result = await run(vehicle, { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}' }, items);
		expect(result.json().map((answer) => answer.carNumber)).toEqual(items.map((item) => item.plate));
		expect(pairedItems(result)).toEqual(items.map((_, item) => ({ item })));
		expect(emulator.ledger().byPath['/luoz/query']).toMatchObject({ calls: 3, billedCalls: 3 });
	});

	it('surfaces a gateway error code as a readable error', async () => {
		const result = await run(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '京A10404', carType: '02' }, [{}]);
		expect(result.error?.message).toMatch(/^Get Vehicle Detail failed: gateway code \d+: no record of this vehicle$/);
		expect(result.error?.itemIndex).toBe(0);
	});

	it('Retry On Fail does not pay again for answers it already has', async () => {
		const result = await run(
			vehicle,
			{ resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' },
			[{ plate: '京A12345' }, { plate: '京A10404' }],
			{ retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
		);
		expect(result.error?.message).toMatch(/no record of this vehicle/);
		const calls = emulator.ledger().byPath['/car/query'];
		// The failing plate is asked on every try; the good one is paid once.
		expect(calls).toMatchObject({ calls: 4, billedCalls: 1 });
	});
});
