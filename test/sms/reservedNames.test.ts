/**
 * Issue 33 item 13: every name the gateway reserves for template variables is refused before any
 * call, each on its own (the other tests name only "mobile" and "nick"). The names are written out
 * from the gateway's rules (gateway-api.md, "Templates"), not read from the package's list: a name
 * dropped from that list must fail here.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

let emulator: Emulator;
const HOUR = 3_600_000;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();

function run(parameters: INodeParameters, items: IDataObject[] = [{ phone: '13900003101' }]) {
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } },
	});
}

const RESERVED = ['id', 'email', 'mobile', 'nick', 'site'];
/** Each name as written, and capitalised: the gateway's rule is not case-sensitive. */
const spellings = RESERVED.flatMap((name) => [name, name[0].toUpperCase() + name.slice(1)]);

describe.each(spellings)('the reserved variable name "%s"', (name) => {
	const reserved = new RegExp(`"${name}" is reserved by the gateway`);

	async function expectRefusedBeforeAnyCall(parameters: INodeParameters, field: string) {
		const result = await run(parameters);
		expect(result.error?.message).toMatch(new RegExp(`^Item 1: ${field} `));
		expect(result.error?.message).toMatch(reserved);
		expect(emulator.ledger().totals.calls).toBe(0);
	}

	it('Send, variables as name and value: refused, no call', async () => {
		await expectRefusedBeforeAnyCall(sendParameters(emulator, { variables: { variable: [{ name: 'code', value: '1234' }, { name, value: 'x' }] } }), 'Variables');
	});

	it('Send, variables as JSON: refused, no call', async () => {
		await expectRefusedBeforeAnyCall(sendParameters(emulator, { variablesInput: 'json', variablesJson: JSON.stringify({ code: '1234', [name]: 'x' }) }), 'Variables');
	});

	it('Preview: refused before reading the signature and template', async () => {
		await expectRefusedBeforeAnyCall(sendParameters(emulator, { operation: 'preview', variables: { variable: [{ name, value: 'x' }] } }), 'Variables');
	});

	it('Template Create and Update: a content using it is refused, no call', async () => {
		const content = `您的验证码是\${code}，请访问\${${name}}`;
		await expectRefusedBeforeAnyCall({ resource: 'template', operation: 'create', name: '保留名模板', content, remark: '登录验证' }, 'Content');
		await expectRefusedBeforeAnyCall({ resource: 'template', operation: 'update', id: 1, name: '保留名模板', content, remark: '登录验证' }, 'Content');
	});
});
