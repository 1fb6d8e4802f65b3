import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow, type WorkflowRunResult } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started), {}, { deliveryFailureShare: 0, reviewDelayMs: 3_600_000, deliveryDelayMs: 3_600_000 });

const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();
const telephone = new DataGatewayTelephone();
const sms = new DataGatewaySms();

function run(type: INodeType, parameters: INodeParameters, items: IDataObject[], typeVersion?: number) {
	return runWorkflow({
		steps: [{ name: 'Node', type, parameters, typeVersion }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url } },
	});
}

/** The execution hints n8n keeps in the run data, as the editor shows them above the output. */
const hints = (result: WorkflowRunResult) => (result.run.data.resultData.runData.Node?.[0]?.hints ?? []).map((hint) => hint.message);

const PHONES = ['13800138000', '13900139000', '13800138000', '010-12345678', '13700137000', '13900139000', '13800138000', '021-87654321'];

describe('version 1.1 (new nodes): Simplify on, self-explaining names, costYuan after the key fields', () => {
	it('Telephone: a new node simplifies without being asked; names say what they mean; description is plain text', async () => {
		const [mobile] = (await run(telephone, { phoneNumber: '13800138000' }, [{}], 1.1)).json();
		expect(Object.keys(mobile).slice(0, 5)).toEqual(['phone', 'isFlagged', 'reportType', 'reportCount', 'costYuan']);
		expect(mobile).toMatchObject({ phone: '13800138000', isFlagged: expect.any(Boolean), reportCount: expect.any(Number), costYuan: 0 });
		for (const raw of ['iszhapian', 'sp', 'rpt_type', 'rpt_comment', 'rpt_cnt', 'hy', 'hyname', 'countDesc', 'countDescText']) expect(mobile).not.toHaveProperty(raw);
		expect(mobile).toHaveProperty('carrier');
		expect(mobile).toHaveProperty('company');
		expect(String(mobile.description)).not.toMatch(/<[^>]+>/);
	});

	it('Telephone with Simplify off: exactly the gateway answer, the same as version 1', async () => {
		const latest = (await run(telephone, { phoneNumber: '13800138000', simplify: false }, [{}])).json();
		const first = (await run(telephone, { phoneNumber: '13800138000' }, [{}], 1)).json();
		expect(latest).toEqual(first);
		expect(latest[0]).toHaveProperty('iszhapian');
	});

	it('Vehicle detail and violations: key fields, then costYuan, then the rest with ISO dates and numbers', async () => {
		const [detail] = (await run(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD12345', carType: '52' }, [{}])).json();
		expect(Object.keys(detail).slice(0, 7)).toEqual(['plateNumber', 'vin', 'brand', 'model', 'vehicleType', 'status', 'costYuan']);
		expect(detail.costYuan).toBe(1.2);
		expect(detail.firstRegisteredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/);
		expect(typeof detail.seats).toBe('number');
		expect(Object.keys(detail).every((key) => /^[a-z][a-zA-Z]*$/.test(key))).toBe(true);

		const [violations] = (await run(vehicle, { resource: 'violation', operation: 'query', carNumber: '京A12345', carEngineCode: '123456' }, [{}])).json();
		expect(Object.keys(violations).slice(0, 4)).toEqual(['plateNumber', 'violationCount', 'totalFineYuan', 'costYuan']);
		expect(violations.costYuan).toBe(0.04);
		for (const record of violations.violations as IDataObject[]) expect(Object.keys(record).every((key) => /^[a-z][a-zA-Z]*$/.test(key))).toBe(true);
	});

	it('Registration: a flat camelCase record, costYuan after name, credit code, status and legal representative', async () => {
		const [company] = (await run(enterprise, { resource: 'registration', operation: 'get', keyword: '北京示例科技有限公司' }, [{}])).json();
		expect(Object.keys(company).slice(0, 5)).toEqual(['name', 'creditCode', 'status', 'legalRepresentative', 'costYuan']);
		expect(company).toMatchObject({ name: '北京示例科技有限公司', costYuan: 0.35, termEnd: null });
		const snake = JSON.stringify(company).match(/"[a-z]+_[a-z_]+":/g);
		expect(snake).toBeNull();
	});

	it('Copyright: every record carries its page price and a share of the item cost; the shares add up to the bill', async () => {
		const parameters = { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: false, limit: 15 };
		const result = await run(enterprise, parameters, [{}, {}], 1.1);
		const records = result.json();
		expect(records).toHaveLength(30);
		const first = records.slice(0, 15);
		const second = records.slice(15);
		expect(Object.keys(first[0]).slice(0, 5)).toEqual(['name', 'registrationNumber', 'owner', 'costYuan', 'pageCostYuan']);
		expect(first.every((record) => record.pageCostYuan === 0.2)).toBe(true);
		expect(Math.round(first.reduce((sum, record) => sum + Number(record.costYuan), 0) * 10000) / 10000).toBe(0.4);
		// The second item reads the same two pages: paid by the first item, free for it.
		expect(second.every((record) => record.pageCostYuan === 0 && record.costYuan === 0)).toBe(true);
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 2, billedCalls: 2 });
		expect(hints(result)).toEqual(['2 paid calls, 0.4 yuan; 2 pages answered without a new call']);
	});
});

describe('version 1.4 (Enterprise): each page\'s cost once, on the first record of the page the item paid for', () => {
	it('Copyright: 0.2 on the first record of each paid page, 0 on the others and on pages another item paid; the column adds up to the bill', async () => {
		const parameters = { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: false, limit: 15 };
		const result = await run(enterprise, parameters, [{}, {}]);
		const records = result.json();
		expect(records).toHaveLength(30);
		expect(Object.keys(records[0]).slice(0, 4)).toEqual(['name', 'registrationNumber', 'owner', 'costYuan']);
		expect(records.every((record) => !('pageCostYuan' in record))).toBe(true);
		// Pages of 10: records 1 and 11 of the first item start its two paid pages.
		const paidAt = records.flatMap((record, index) => (record.costYuan === 0 ? [] : [[index, record.costYuan]]));
		expect(paidAt).toEqual([
			[0, 0.2],
			[10, 0.2],
		]);
		expect(hints(result)).toEqual(['2 paid calls, 0.4 yuan; 2 pages answered without a new call']);
	});
});

describe('version 1.2 (Enterprise and Telephone): one cost column, the number as given', () => {
	it('Copyright: costYuan alone, and it adds up to the bill', async () => {
		const parameters = { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: false, limit: 15 };
		const result = await run(enterprise, parameters, [{}, {}], 1.2);
		const records = result.json();
		expect(Object.keys(records[0]).slice(0, 4)).toEqual(['name', 'registrationNumber', 'owner', 'costYuan']);
		expect(records.every((record) => !('pageCostYuan' in record))).toBe(true);
		expect(Math.round(records.reduce((sum, record) => sum + Number(record.costYuan), 0) * 10000) / 10000).toBe(0.4);
		// The item's 0.4 yuan shared by its 15 records: fractions.
		expect(records[1].costYuan).toBe(0.0266);
		const raw = (await run(enterprise, { ...parameters, simplify: false }, [{}], 1.2)).json();
		expect(raw[0]).toHaveProperty('RegisterNo');
		expect(raw[0]).not.toHaveProperty('pageCostYuan');
	});

	it('Telephone: phoneAsGiven beside the normalised phone, for joins by value', async () => {
		const [landline, mobile] = (await run(telephone, { phoneNumber: '={{ $json.phone }}' }, [{ phone: '021-12345678' }, { phone: '+86 138 0013 8000' }])).json();
		expect(Object.keys(landline).slice(0, 2)).toEqual(['phone', 'phoneAsGiven']);
		expect(landline).toMatchObject({ phone: '02112345678', phoneAsGiven: '021-12345678' });
		expect(mobile).toMatchObject({ phone: '13800138000', phoneAsGiven: '+86 138 0013 8000' });
		const [rawAnswer] = (await run(telephone, { phoneNumber: '021-12345678', simplify: false }, [{}])).json();
		expect(rawAnswer).not.toHaveProperty('phoneAsGiven');
	});
});

describe('version 1 (saved workflows): the output they were built on', () => {
	it('Telephone simplified keeps the gateway names plus isFlagged and countDescText', async () => {
		const raw = (await run(telephone, { phoneNumber: '13800138000' }, [{}], 1)).json()[0];
		const [simple] = (await run(telephone, { phoneNumber: '13800138000', simplify: true }, [{}], 1)).json();
		expect(Object.keys(simple)).toEqual([...Object.keys(raw), 'isFlagged', 'countDescText']);
		expect(simple.countDesc).toBe(raw.countDesc);
	});

	it('Vehicle detail simplified keeps every gateway name, adds <date>Iso, and costYuan stays last', async () => {
		const parameters = { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD12345', carType: '52' };
		const [raw] = (await run(vehicle, parameters, [{}], 1)).json();
		const [simple] = (await run(vehicle, { ...parameters, simplify: true }, [{}], 1)).json();
		const keys = Object.keys(raw).filter((key) => key !== 'costYuan');
		expect(Object.keys(simple)).toEqual([...keys, 'validityDayEndIso', 'ppsDateIso', 'firstIssueDateIso', 'retirementDateIso', 'costYuan']);
	});

	it('Copyright keeps the PascalCase names and the listing cost on its first record only', async () => {
		const records = (await run(enterprise, { resource: 'copyright', operation: 'getAll', keyword: 'many works', limit: 15, simplify: true }, [{}], 1)).json();
		expect(records[0]).toHaveProperty('RegisterNo');
		expect(records.map((record) => record.costYuan)).toEqual([0.4, ...Array<number>(14).fill(0)]);
		expect(records[0]).not.toHaveProperty('pageCostYuan');
	});
});

describe('the bill at a glance: an execution hint after every run', () => {
	it('8 numbers, 5 distinct: "5 free calls … 3 repeated numbers answered without a new call; 5 calls today"', async () => {
		const result = await run(telephone, { phoneNumber: '={{ $json.phone }}' }, PHONES.map((phone) => ({ phone })));
		expect(emulator.ledger().byPath['/telecom/identify'].calls).toBe(5);
		// Each test starts with a fresh store (test/harness/freshStore.ts): the day's count is this run's.
		expect(hints(result)).toEqual(["5 free calls, 0 yuan (within the gateway's daily free quota); 3 repeated numbers answered without a new call; 5 calls today"]);
	});

	it('one repeat is named in the singular: "1 repeated number"', async () => {
		const result = await run(telephone, { phoneNumber: '={{ $json.phone }}' }, [{ phone: PHONES[0] }, { phone: PHONES[0] }]);
		expect(hints(result)).toEqual(["1 free call, 0 yuan (within the gateway's daily free quota); 1 repeated number answered without a new call; 1 call today"]);
	});

	it('paid lookups: paid calls and yuan, also in version 1', async () => {
		const plates = ['京A11111', '沪B22222', '粤BD33333'];
		const items = Array.from({ length: 12 }, (_, index) => ({ plate: plates[index % 3] }));
		const result = await run(vehicle, { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}' }, items, 1);
		expect(hints(result)).toEqual(['3 paid calls, 0.12 yuan; 9 repeated plates answered without a new call']);
	});

	it('free queries and failed items are named', async () => {
		const rules = await run(vehicle, { resource: 'violation', operation: 'getSupportRules', preCarNum: '粤' }, [{}]);
		expect(hints(rules)).toEqual(['1 free call, 0 yuan']);
	});

	it('SMS: messages, segments and what they cost when delivered', async () => {
		const parameters = {
			resource: 'message',
			operation: 'send',
			signId: emulator.demo.signatureId,
			templateId: emulator.demo.templateId,
			phone: '={{ $json.phone }}',
			variablesInput: 'keyValue',
			variables: { variable: [{ name: 'code', value: '1234' }] },
			sendOptions: { readTemplate: true },
		};
		const result = await runWorkflow({
			steps: [{ name: 'Node', type: sms, parameters }],
			items: [{ phone: '13900004001' }, { phone: '13900004002' }],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } },
		});
		expect(result.error).toBeUndefined();
		const segments = result.json().reduce((sum, item) => sum + Number(item.segments), 0);
		const yuan = Math.round(result.json().reduce((sum, item) => sum + Number(item.costYuan), 0) * 10000) / 10000;
		expect(hints(result)).toEqual([`2 SMS sent, ${segments} message segments, ${yuan} yuan when delivered`]);
	});
});
