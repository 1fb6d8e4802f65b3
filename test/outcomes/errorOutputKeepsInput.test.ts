import type { IDataObject, INodeExecutionData, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

let emulator: Emulator;
const HOUR = 3_600_000;
useEmulator((started) => (emulator = started), { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 });

const enterprise = new DataGatewayEnterprise();
const sms = new DataGatewaySms();
const telephone = new DataGatewayTelephone();
const vehicle = new DataGatewayVehicle();

/** The node under "Continue (using error output)"; its Success (0) and Error (1) branches. */
async function branches(type: INodeType, parameters: INodeParameters, items: IDataObject[], typeVersion?: number, credential: IDataObject = {}) {
	const result = await runWorkflow({
		steps: [{ name: 'Node', type, typeVersion, parameters, settings: { onError: 'continueErrorOutput' } }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...credential } },
	});
	expect(result.error).toBeUndefined();
	return { success: result.items(undefined, 0), failed: result.items(undefined, 1), run: result.run };
}

const pairedIndexes = (items: INodeExecutionData[]) => items.map((item) => (item.pairedItem as { item: number }).item);

describe('new versions: the Error branch carries the failed item\'s input beside the error', () => {
	it('the newest versions keep the input: SMS 1.5, Enterprise and Telephone 1.4, Vehicle 1.3', () => {
		expect([sms, enterprise, telephone, vehicle].map((type) => type.description.defaultVersion)).toEqual([1.5, 1.4, 1.4, 1.3]);
	});

	/** n8n's convention from SMS, Enterprise and Telephone 1.4, Vehicle 1.3: message is the error, details.fix the fix. */
	const messageFirst = (input: IDataObject, error: RegExp | string, fix: RegExp | string) => {
		const matcher = (text: RegExp | string) => (typeof text === 'string' ? expect.stringContaining(text) : expect.stringMatching(text));
		return { ...input, message: matcher(error), error: matcher(error), details: { fix: matcher(fix) } };
	};

	it('Enterprise 1.4: the unknown company says the error in message, the fix in details.fix', async () => {
		const keywords = [{ keyword: '北京示例科技有限公司' }, { keyword: 'notfound 公司' }];
		const { success, failed } = await branches(enterprise, { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}' }, keywords, undefined, {
			appCodeSecret: emulator.demo.memberAppCode,
		});
		expect(pairedIndexes(success)).toEqual([0]);
		expect(failed[0].json).toEqual(messageFirst({ keyword: 'notfound 公司' }, 'gateway code 20004', 'The gateway refused'));
		expect(failed[0].json.message).toBe(failed[0].json.error);
		expect(failed[0].error).toBeUndefined();
	});

	it('Telephone 1.4: the malformed number says the error in message, the fix in details.fix', async () => {
		const { failed } = await branches(telephone, { phoneNumber: '={{ $json.phone }}' }, [{ phone: '13800138000' }, { phone: '12' }]);
		expect(failed[0].json).toEqual(messageFirst({ phone: '12' }, /^Item 2: Phone Number/, /No call was made/));
		expect(failed[0].pairedItem).toEqual({ item: 1 });
	});

	it('Vehicle 1.3: the short plate says the error in message, the fix in details.fix', async () => {
		const parameters = { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' };
		const { failed } = await branches(vehicle, parameters, [{ plate: '京A123', owner: 'fleet 3' }]);
		expect(failed[0].json).toEqual(messageFirst({ plate: '京A123', owner: 'fleet 3' }, /^Item 1: Plate Number/, /No call was made/));
		expect(failed[0].error).toBeUndefined();
	});

	it("SMS Send 1.4 follows n8n's convention: message is the error, details.fix the fix, beside the item's input", async () => {
		const { success, failed } = await branches(sms, sendParameters(emulator), [{ phone: '13900002141', name: 'Ann' }, { phone: '12345', name: 'Bob' }]);
		expect(pairedIndexes(success)).toEqual([0]);
		expect(failed[0].json).toEqual({
			phone: '12345',
			name: 'Bob',
			message: expect.stringMatching(/^Item 2: Phone Number "12345"/),
			error: expect.stringMatching(/^Item 2: Phone Number "12345"/),
			details: { fix: expect.stringMatching(/No call was made/) },
		});
		expect(failed[0].json.message).toBe(failed[0].json.error);
		expect(failed[0].error).toBeUndefined();
	});

	it('SMS Get Status 1.4: the failed item keeps its task ID, with the error in message', async () => {
		const { failed } = await branches(sms, { resource: 'message', operation: 'getStatus', taskId: '={{ $json.taskId }}' }, [{ taskId: '', orderId: 'A-8' }]);
		expect(failed[0].json).toEqual({ taskId: '', orderId: 'A-8', message: expect.stringMatching(/^Item 1: Task ID/), error: expect.stringMatching(/^Item 1: Task ID/), details: { fix: expect.any(String) } });
	});

	it('SMS Send 1.3: the refused phone 12345 reaches the Error branch with its phone and name, the error and the fix', async () => {
		const items = [{ phone: '13900002101', name: 'Ann' }, { phone: '12345', name: 'Bob' }, { phone: '13900002103', name: 'Cai' }];
		const { success, failed } = await branches(sms, sendParameters(emulator), items, 1.3);
		expect(pairedIndexes(success)).toEqual([0, 2]);
		expect(success.map((item) => item.json.taskId)).toEqual([expect.any(String), expect.any(String)]);
		expect(failed).toHaveLength(1);
		expect(failed[0].json).toEqual({ phone: '12345', name: 'Bob', error: expect.stringMatching(/^Item 2: Phone Number "12345"/), message: expect.stringMatching(/No call was made/) });
		expect(failed[0].pairedItem).toEqual({ item: 1 });
		expect(failed[0].error).toBeUndefined();
		expect(emulator.ledger().byPath['/sms/send'].calls).toBe(2);
	});

	it('SMS Send 1.2 (saved workflows) keeps the error on the item and n8n\'s { error } json', async () => {
		const { failed } = await branches(sms, sendParameters(emulator), [{ phone: '13900002111' }, { phone: '12345' }], 1.2);
		expect(failed[0].json).toEqual({ error: expect.stringMatching(/^Item 2: Phone Number/) });
		expect(failed[0].error?.description).toMatch(/No call was made/);
		expect(failed[0].pairedItem).toEqual({ item: 1 });
	});

	it('SMS Get Status 1.3: the failed item keeps its task ID', async () => {
		const { success, failed } = await branches(sms, { resource: 'message', operation: 'getStatus', taskId: '={{ $json.taskId }}' }, [{ taskId: '', orderId: 'A-7' }], 1.3);
		expect(success).toEqual([]);
		expect(failed[0].json).toEqual({ taskId: '', orderId: 'A-7', error: expect.stringMatching(/^Item 1: Task ID/), message: expect.any(String) });
		expect(failed[0].error).toBeUndefined();
	});

	it('Enterprise 1.3: the unknown company reaches the Error branch with its keyword and the gateway code in the message', async () => {
		const keywords = [{ keyword: '北京示例科技有限公司' }, { keyword: 'notfound 公司' }];
		const { success, failed } = await branches(enterprise, { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}' }, keywords, 1.3, {
			appCodeSecret: emulator.demo.memberAppCode,
		});
		expect(pairedIndexes(success)).toEqual([0]);
		expect(failed[0].json).toEqual({ keyword: 'notfound 公司', error: expect.stringContaining('gateway code 20004'), message: expect.stringContaining('The gateway refused') });
		expect(failed[0].pairedItem).toEqual({ item: 1 });
		const old = await branches(enterprise, { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}' }, keywords, 1.2, { appCodeSecret: emulator.demo.memberAppCode });
		expect(old.failed[0].json).toEqual({ error: expect.stringContaining('gateway code 20004') });
		expect(old.failed[0].error?.context.gatewayCode).toBe(20004);
	});

	it('Telephone 1.3: the malformed number keeps its phone field; no call is made for it', async () => {
		const { success, failed } = await branches(telephone, { phoneNumber: '={{ $json.phone }}' }, [{ phone: '13800138000' }, { phone: '12' }], 1.3);
		expect(pairedIndexes(success)).toEqual([0]);
		expect(failed[0].json).toEqual({ phone: '12', error: expect.stringMatching(/^Item 2: Phone Number/), message: expect.stringMatching(/No call was made/) });
		expect(failed[0].pairedItem).toEqual({ item: 1 });
	});

	it('Vehicle 1.2: the short plate keeps its plate; Vehicle 1.1 keeps the error on the item', async () => {
		const parameters = { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' };
		const { failed } = await branches(vehicle, parameters, [{ plate: '京A123', owner: 'fleet 3' }], 1.2);
		expect(failed[0].json).toEqual({ plate: '京A123', owner: 'fleet 3', error: expect.stringMatching(/^Item 1: Plate Number/), message: expect.stringMatching(/No call was made/) });
		expect(failed[0].error).toBeUndefined();
		const old = await branches(vehicle, parameters, [{ plate: '京A123' }], 1.1);
		expect(old.failed[0].json).toEqual({ error: expect.stringMatching(/^Item 1: Plate Number/) });
		expect(old.failed[0].error).toBeDefined();
		expect(emulator.ledger().byPath['/vehicle/detail']).toBeUndefined();
	});

	it.each(['send', 'sendAndCheck'])('SMS %s refused whole by the spending cap: every item reaches the Error branch with its own input', async (operation) => {
		const parameters = { ...sendParameters(emulator), operation, waitTimeoutSeconds: 1 };
		const { success, failed } = await branches(sms, parameters, [{ phone: '13900002121' }, { phone: '13900002122' }], undefined, { maxSpendPerExecution: 0.04 });
		expect(success).toEqual([]);
		expect(failed.map((item) => item.json.phone)).toEqual(['13900002121', '13900002122']);
		for (const item of failed) expect(item.json.error).toMatch(/^Spending cap: /);
		expect(emulator.ledger().byPath['/sms/send']).toBeUndefined();
	});

	it('the error and the fix carry no part of the appCode, however the gateway echoed it', async () => {
		const appCode = 'wrong-app-code-5c8e1b77a2';
		const { failed, run } = await branches(enterprise, { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}' }, [{ keyword: '北京示例科技有限公司' }], undefined, { appCodeSecret: appCode });
		expect(failed[0].json).toEqual({ keyword: '北京示例科技有限公司', message: expect.stringContaining('[redacted]'), error: expect.stringContaining('[redacted]'), details: { fix: expect.any(String) } });
		const texts: string[] = [];
		const seen = new Set<unknown>();
		const walk = (value: unknown) => {
			if (typeof value === 'string') texts.push(value);
			if (typeof value !== 'object' || value === null || seen.has(value)) return;
			seen.add(value);
			for (const key of Object.getOwnPropertyNames(value)) walk((value as Record<string, unknown>)[key]);
		};
		walk(run.data);
		expect(texts.length).toBeGreaterThan(10);
		for (const fragment of [appCode, appCode.slice(0, 8), appCode.slice(-8)]) expect(texts.filter((text) => text.includes(fragment))).toEqual([]);
	});

	it('Continue (regular output) is unchanged in 1.3: one output, the failed item with its readable fields', async () => {
		const result = await runWorkflow({
			steps: [{ name: 'Node', type: sms, parameters: sendParameters(emulator), settings: { onError: 'continueRegularOutput' } }],
			items: [{ phone: '13900002131' }, { phone: '12345' }],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } },
		});
		const items = result.items();
		expect(items[1].json).toEqual({ phone: '12345', error: expect.stringMatching(/^Item 2: Phone Number/), errorDescription: expect.stringMatching(/No call was made/) });
		expect(items[1].error).toBeUndefined();
		expect(result.items(undefined, 1)).toEqual([]);
	});
});
