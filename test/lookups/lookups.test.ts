import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();
const telephone = new DataGatewayTelephone();

function run(
	type: INodeType,
	parameters: INodeParameters,
	items: IDataObject[],
	settings: WorkflowStep['settings'] = {},
	credential: IDataObject = {},
	typeVersion = 1,
) {
	// Version 1 unless a test says otherwise: these checks hold the output saved workflows rely on.
	return runWorkflow({
		steps: [{ name: 'Lookup', type, parameters, settings, typeVersion }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, ...credential } },
	});
}

const pairedItems = (result: Awaited<ReturnType<typeof run>>) => result.items().map((item) => item.pairedItem);

describe('every operation', () => {
	it('Vehicle › Violation › Get Support Rules lists the rules of a prefix', async () => {
		const result = await run(vehicle, { resource: 'violation', operation: 'getSupportRules', preCarNum: '粤b' }, [{}]);
		expect(result.error).toBeUndefined();
		expect(result.json()).toEqual([expect.objectContaining({ preCarNum: '粤', province: '广东', carEngineLen: expect.any(Number) })]);
	});

	it('Vehicle › Violation › Get Support Rules by province, and all rules when both are empty: one item per rule, free', async () => {
		const byProvince = await run(vehicle, { resource: 'violation', operation: 'getSupportRules', province: '广东' }, [{}]);
		expect(byProvince.json()).toEqual([expect.objectContaining({ province: '广东', carCodeLen: expect.any(Number) })]);
		const all = await run(vehicle, { resource: 'violation', operation: 'getSupportRules' }, [{}]);
		expect(all.json().length).toBeGreaterThan(3);
		expect(pairedItems(all).every((paired) => (paired as { item: number }).item === 0)).toBe(true);
		expect(emulator.ledger().byPath['/luoz/support']).toMatchObject({ calls: 2, billedCalls: 0, costYuan: 0 });
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

	it('Enterprise › Copyright › Get Many with a larger Page Size needs fewer paid pages and stops at the total', async () => {
		const parameters = { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: true };
		expect((await run(enterprise, { ...parameters, options: { pageSize: 20 } }, [{}])).json()).toHaveLength(47);
		expect(emulator.ledger().byPath['/enterprise/copyright'].calls).toBe(3);
		emulator.resetLedger();
		// A full page that reaches totalRecords ends the listing without asking for an empty page.
		expect((await run(enterprise, { ...parameters, options: { pageSize: 47 } }, [{}])).json()).toHaveLength(47);
		expect(emulator.ledger().byPath['/enterprise/copyright'].calls).toBe(1);
	});

	it('Telephone identifies mobile and landline numbers, and Simplify adds a flag and plain text', async () => {
		const result = await run(telephone, { phoneNumber: '={{ $json.phone }}', simplify: true }, [{ phone: '+86 138-0013-8000' }, { phone: '010-12345678' }]);
		const [mobile, landline] = result.json();
		expect(mobile).toMatchObject({ phone: '13800138000', isFlagged: expect.any(Boolean) });
		expect(landline.phone).toBe('01012345678');
		if (mobile.isFlagged) expect(mobile.countDescText).not.toMatch(/</);
	});

	it('Telephone without Simplify hands over the gateway\'s fields', async () => {
		const [identity] = (await run(telephone, { phoneNumber: '13800138000' }, [{}])).json();
		expect(identity).toMatchObject({ phone: '13800138000', iszhapian: expect.any(Number), countDesc: expect.any(String) });
	});
});

describe('input checks cost nothing', () => {
	const cases: Array<[string, INodeType, INodeParameters, RegExp]> = [
		['plate prefix', vehicle, { resource: 'violation', operation: 'getSupportRules', preCarNum: 'Guangdong' }, /Item 1: Plate Prefix "Guangdong" is not a plate prefix/],
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

	it('Continue On Fail on Telephone and Vehicle: bad and unknown items become error items in place', async () => {
		const phones = await run(
			telephone,
			{ phoneNumber: '={{ $json.phone }}' },
			[{ phone: '13800138000' }, { phone: 'call me' }, { phone: '13800140400' }, { phone: '010-12345678' }],
			{ continueOnFail: true },
		);
		expect(pairedItems(phones)).toEqual([0, 1, 2, 3].map((item) => ({ item })));
		expect(phones.json().map((item) => item.phone ?? item.error)).toEqual([
			'13800138000',
			expect.stringMatching(/^Item 2: Phone Number "call me" is neither/),
			expect.stringMatching(/^Identify Telephone Number failed: gateway code \d+: no information about this number$/),
			'01012345678',
		]);

		const plates = await run(
			vehicle,
			{ resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', carType: '={{ $json.type }}' },
			[{ plate: '京A12345', type: '02' }, { plate: '京A12345', type: '77' }, { plate: '粤BD12345', type: '' }],
			{ continueOnFail: true },
		);
		// The failed item keeps its plate (carNumber) beside the error.
		expect(plates.json().map((item) => item.error ?? item.carNumber)).toEqual([
			'京A12345',
			expect.stringMatching(/^Item 2: Vehicle Type "77" is not one of the codes/),
			'粤BD12345',
		]);
		expect(plates.json()[1].carNumber).toBe('京A12345');
		expect(pairedItems(plates)).toEqual([0, 1, 2].map((item) => ({ item })));
		expect(emulator.ledger().byPath['/luoz/query']).toMatchObject({ calls: 2, billedCalls: 2 });
	});

	it('asks once per distinct keyword for enterprise lookups too, including every page of a listing', async () => {
		const items = ['甲公司', '乙公司', '甲公司', ' 甲公司 ', '乙公司'].map((name) => ({ name }));
		const details = await run(enterprise, { resource: 'registration', operation: 'get', keyword: '={{ $json.name }}' }, items);
		expect(details.json().map((detail) => (detail.data as IDataObject).name)).toEqual(['甲公司', '乙公司', '甲公司', '甲公司', '乙公司']);
		expect(emulator.ledger().byPath['/enterprise/detail_info']).toMatchObject({ calls: 2, billedCalls: 2 });

		const listings = await run(enterprise, { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: true }, [{}, {}, {}]);
		expect(listings.json()).toHaveLength(3 * 47);
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 5, billedCalls: 5 });
	});

	it('surfaces a gateway error code as a readable error', async () => {
		const result = await run(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '京A10404', carType: '02' }, [{}]);
		expect(result.error?.message).toMatch(/^Get Vehicle Detail failed: gateway code \d+: no record of this vehicle$/);
		expect(result.error?.itemIndex).toBe(0);
	});

	it('Retry On Fail does not pay again for answers it already has', async () => {
		// The second call is refused with 429 once (no transport retry), the whole node fails, and
		// n8n re-runs it with both items. A fault in sequence, not a rate cap: nothing races the clock.
		emulator.setFaults({ sequence: [{ kind: '429', count: 1, skip: 1, retryAfterSeconds: 0, path: '/car/query' }] });
		const result = await run(
			vehicle,
			{ resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' },
			[{ plate: '京A12345' }, { plate: '沪B54321' }],
			{ retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
			// Its own account (limiter) and one call at a time, so the first item is always the one answered first.
			{ appCodeSecret: emulator.demo.appCode, maxConcurrent: 1, maxRetries: 0 },
		);
		expect(result.error).toBeUndefined();
		expect(result.json().map((detail) => detail.plateType)).toEqual(['02', '02']);
		expect(pairedItems(result)).toEqual([{ item: 0 }, { item: 1 }]);
		// First try: item 1 billed, item 2 refused. Second try: only item 2 asked.
		expect(emulator.ledger().byPath['/car/query']).toMatchObject({ calls: 3, rejected429: 1, billedCalls: 2 });
	});

	it('Retry On Fail keeps answering the good item from memory while a bad one fails every try', async () => {
		const result = await run(
			vehicle,
			{ resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' },
			[{ plate: '京A12345' }, { plate: '京A10404' }],
			{ retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
		);
		expect(result.error?.message).toMatch(/no record of this vehicle/);
		// The failing plate is asked on every try; the good one is paid once.
		expect(emulator.ledger().byPath['/car/query']).toMatchObject({ calls: 4, billedCalls: 1 });
	});

	it('never shows the appCode in output items or errors', async () => {
		const result = await run(
			enterprise,
			{ resource: 'registration', operation: 'get', keyword: '={{ $json.name }}' },
			[{ name: '甲公司' }, { name: 'notfound' }],
			{ continueOnFail: true },
		);
		const failed = await run(telephone, { phoneNumber: '13800140400' }, [{}]);
		// The whole error object n8n stores with the execution, not only its message.
		const seen = JSON.stringify([result.json(), failed.run.data.resultData.error]);
		expect(seen).toContain('no information about this number');
		expect(seen).not.toContain(emulator.demo.memberAppCode);
	});
});
