import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

let emulator: Emulator;
const HOUR = 3_600_000;
useEmulator((started) => (emulator = started), { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 });

const enterprise = new DataGatewayEnterprise();
const sms = new DataGatewaySms();

function run(type: INodeType, parameters: INodeParameters, items: IDataObject[], appCode = emulator.demo.appCode) {
	return runWorkflow({ steps: [{ name: 'Node', type, parameters }], items, credentials: { dataGatewayApi: { appCodeSecret: appCode, baseUrl: emulator.url } } });
}

const registration = { resource: 'registration', operation: 'get', keyword: '={{ $json.keyword }}' };

/**
 * The error that stops a node names its item once, counted from 1. n8n's editor appends " [item N]",
 * counted from 0, to any error with an itemIndex when the node had several input items: the stopping
 * error leaves that index out, so "Item 1: … [item 0]" cannot appear.
 */
describe('the error that stops the node names its item once, counted from 1', () => {
	it('both IDs 0 with two recipients: one message names item 1 and both fields, and carries no 0-based index', async () => {
		// 0 from expressions in the 1.4 pickers (a fixed 0 is flagged by the form as missing).
		const zero = { __rl: true, mode: 'id', value: '={{ 0 }}' };
		const result = await run(sms, sendParameters(emulator, { signId: zero, templateId: zero }), [{ phone: '13900031101' }, { phone: '13900031102' }]);
		expect(result.error?.message).toBe('Item 1: Signature and Template are both empty or 0');
		expect(result.error?.itemIndex).toBeUndefined();
		expect(emulator.ledger().byPath['/sms/send']).toBeUndefined();
	});

	it('a refused second phone number: "Item 2", once', async () => {
		const result = await run(sms, sendParameters(emulator), [{ phone: '13900031111' }, { phone: '12345' }]);
		expect(result.error?.message).toMatch(/^Item 2: Phone Number "12345"/);
		expect(result.error?.message.match(/item/gi)).toHaveLength(1);
		expect(result.error?.itemIndex).toBeUndefined();
	});

	it('a gateway failure of the second of two items gains "Item 2: " in front; with one item its message stays as it was', async () => {
		const two = await run(enterprise, registration, [{ keyword: '北京示例科技有限公司' }, { keyword: 'notfound 公司' }], emulator.demo.memberAppCode);
		expect(two.error?.message).toMatch(/^Item 2: Get Enterprise Detail failed: gateway code 20004/);
		expect(two.error?.itemIndex).toBeUndefined();
		const one = await run(enterprise, registration, [{ keyword: 'notfound 公司' }], emulator.demo.memberAppCode);
		expect(one.error?.message).toMatch(/^Get Enterprise Detail failed: gateway code 20004/);
		expect(one.error?.itemIndex).toBe(0);
	});
});
