import type { IDataObject, INodeExecutionData, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
const HOUR = 3_600_000;
useEmulator((started) => (emulator = started), { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 });

const enterprise = new DataGatewayEnterprise();
const sms = new DataGatewaySms();

/** The versions before error items kept the input (errorOutputKeepsInput.test.ts): what saved workflows get. */
const SAVED_VERSION = 1.2;

function run(type: INodeType, parameters: INodeParameters, items: IDataObject[], settings: WorkflowStep['settings'], appCode = emulator.demo.memberAppCode) {
	return runWorkflow({
		steps: [{ name: 'Node', type, typeVersion: SAVED_VERSION, parameters, settings }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: appCode, baseUrl: emulator.url } },
	});
}

// Simplify off: the gateway's own answer, in both node versions.
const registration = { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}', simplify: false };
const companies = [{ keyword: '北京示例科技有限公司' }, { keyword: 'notfound 公司' }, { keyword: '上海示例贸易有限公司' }];

const send = () => sendParameters(emulator);
const phones = [{ phone: '13900002001' }, { phone: '12345' }, { phone: '13900002003' }];

const pairedIndexes = (items: INodeExecutionData[]) => items.map((item) => (item.pairedItem as { item: number }).item);

describe('Continue (using error output), versions saved before 1.3: failed items leave on the error output, paired with their input', () => {
	it('a lookup: the unknown company goes to the Error branch, the other two to Success', async () => {
		const result = await run(enterprise, registration, companies, { onError: 'continueErrorOutput' });
		expect(result.error).toBeUndefined();
		const success = result.items(undefined, 0);
		const failed = result.items(undefined, 1);
		expect(pairedIndexes(success)).toEqual([0, 2]);
		expect(success.map((item) => (item.json.data as IDataObject).name)).toEqual(['北京示例科技有限公司', '上海示例贸易有限公司']);
		expect(pairedIndexes(failed)).toEqual([1]);
		// n8n shows the error's message in the json, and its description and context beside it. It replaces the json
		// of every item that carries an error by { error: message } (normalizeNodeErrors), so nothing else survives there.
		expect(failed[0].json).toEqual({ error: expect.stringContaining('Get Enterprise Detail failed: gateway code 20004') });
		expect(failed[0].error).toMatchObject({ description: expect.stringContaining('The gateway refused'), context: { gatewayCode: 20004, itemIndex: 1 } });
		expect(emulator.ledger().byPath['/enterprise/detail_info']).toMatchObject({ calls: 3, billedCalls: 2 });
	});

	it('SMS Send: the phone 12345 is refused before any call and goes to the Error branch; the other two are sent', async () => {
		const result = await run(sms, send(), phones, { onError: 'continueErrorOutput' }, emulator.demo.appCode);
		expect(result.error).toBeUndefined();
		const success = result.items(undefined, 0);
		const failed = result.items(undefined, 1);
		expect(pairedIndexes(success)).toEqual([0, 2]);
		expect(success.map((item) => item.json.taskId)).toEqual([expect.any(String), expect.any(String)]);
		expect(pairedIndexes(failed)).toEqual([1]);
		expect(failed[0].json.error).toMatch(/Item 2: Phone/);
		expect(failed[0].error?.description).toMatch(/No call was made/);
		expect(emulator.ledger().byPath['/sms/send'].calls).toBe(2);
	});

	it('a refusal of the whole node (the spending cap) sends every item to the Error branch, none to Success', async () => {
		const result = await runWorkflow({
			steps: [{ name: 'Node', type: enterprise, typeVersion: SAVED_VERSION, parameters: registration, settings: { onError: 'continueErrorOutput' } }],
			items: companies,
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxSpendPerExecution: 0.5 } },
		});
		expect(result.items(undefined, 0)).toEqual([]);
		const failed = result.items(undefined, 1);
		expect(pairedIndexes(failed)).toEqual([0, 1, 2]);
		expect(failed[0].json.error).toMatch(/^Spending cap: /);
		expect(failed[2].error?.description).toMatch(/No paid call was made/);
		expect(emulator.ledger().byPath['/enterprise/detail_info']).toBeUndefined();
	});

	it.each(['send', 'sendAndCheck'])('SMS %s refused whole by the spending cap: every item on the Error branch says why', async (operation) => {
		const result = await runWorkflow({
			steps: [{ name: 'Node', type: sms, typeVersion: SAVED_VERSION, parameters: { ...send(), operation, waitTimeoutSeconds: 1 }, settings: { onError: 'continueErrorOutput' } }],
			items: [{ phone: '13900002011' }, { phone: '13900002012' }],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxSpendPerExecution: 0.04 } },
		});
		expect(result.error).toBeUndefined();
		expect(result.items(undefined, 0)).toEqual([]);
		const failed = result.items(undefined, 1);
		expect(pairedIndexes(failed)).toEqual([0, 1]);
		for (const item of failed) {
			expect(item.json.error).toMatch(/^Spending cap: this node's paid calls are estimated at 0\.07 yuan/);
			expect(item.error?.message).toMatch(/^Spending cap: /);
		}
		expect(failed[1].error?.context.itemIndex).toBe(1);
		expect(emulator.ledger().byPath['/sms/send']).toBeUndefined();
	});

	it('Continue (regular output) keeps every item on the one output, the failed one with its readable fields', async () => {
		const result = await run(enterprise, registration, companies, { onError: 'continueRegularOutput' });
		const items = result.items();
		expect(items[1].error).toBeUndefined();
		expect(pairedIndexes(items)).toEqual([0, 1, 2]);
		// The failed item keeps the input that names it (the keyword) beside the error.
		expect(items[1].json).toEqual({
			keyword: 'notfound 公司',
			error: expect.stringContaining('no enterprise matches the keyword'),
			errorDescription: expect.stringContaining('The gateway refused the request'),
			gatewayCode: 20004,
		});
		expect(result.items(undefined, 1)).toEqual([]);
	});

	it('the error attached to the item carries no part of the appCode, however the gateway echoed it', async () => {
		// The emulator answers an unknown appCode with "invalid appCode <the code>".
		const appCode = 'wrong-app-code-7f3a9c21d4';
		const result = await run(enterprise, registration, companies, { onError: 'continueErrorOutput' }, appCode);
		const failed = result.items(undefined, 1);
		expect(failed).toHaveLength(3);
		expect(failed[0].error?.message).toContain('[redacted]');
		// Everything n8n keeps of the run, with the errors' own properties (stack, cause, context, messages) spelled out.
		const seen = new Set<unknown>();
		const texts: string[] = [];
		const walk = (value: unknown) => {
			if (typeof value === 'string') texts.push(value);
			if (typeof value !== 'object' || value === null || seen.has(value)) return;
			seen.add(value);
			for (const key of Object.getOwnPropertyNames(value)) walk((value as Record<string, unknown>)[key]);
		};
		walk(result.run.data);
		expect(texts.length).toBeGreaterThan(10);
		for (const fragment of [appCode, appCode.slice(0, 8), appCode.slice(-8)]) {
			expect(texts.filter((text) => text.includes(fragment))).toEqual([]);
		}
	});

	it('Continue (regular output): a failed SMS item keeps its phone number, a failed status query its task ID', async () => {
		const sent = await run(sms, send(), phones, { onError: 'continueRegularOutput' }, emulator.demo.appCode);
		expect(sent.items()[1].json).toMatchObject({ phone: '12345', error: expect.stringMatching(/Item 2: Phone Number/) });
		expect(sent.items()[0].json).not.toHaveProperty('error');
		const status = await run(sms, { resource: 'message', operation: 'getStatus', taskId: '={{ $json.taskId }}' }, [{ taskId: '' }], { onError: 'continueRegularOutput' }, emulator.demo.appCode);
		expect(status.items()[0].json).toMatchObject({ taskId: '', error: expect.any(String) });
	});
});
