import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters as demoSend } from '../harness/sms';
import { runWorkflow, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
/** Reviews and deliveries end only when a test finishes them (or sets a delay of 0): no test races a timer. */
const HOUR = 3_600_000;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();

function run(parameters: INodeParameters, items: IDataObject[] = [{}], settings: WorkflowStep['settings'] = {}, typeVersion?: number) {
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters, settings, typeVersion }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } },
	});
}

const sendParameters = (phone: string, extra: INodeParameters = {}) => demoSend(emulator, { phone, ...extra });

const sendCalls = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;

describe('Message', () => {
	it('Send outputs the task ID, and with the template read, its length, segments and cost', async () => {
		const result = await run(sendParameters('13900001001', { sendOptions: { readTemplate: true } }));
		expect(result.error).toBeUndefined();
		const [sent] = result.json();
		expect(sent).toMatchObject({ taskId: expect.any(String), phone: '13900001001', sentEarlierInThisRun: false, segments: 1 });
		// 【数据网关】 (6, the brackets count) + 您的验证码是1234，5分钟内有效。(18)
		expect(sent.length).toBe(24);
		expect(sent.estimatedCostYuan).toBeCloseTo(0.035);
		expect(sendCalls()).toBe(1);
	});

	it('Send leaves params out when there are no variables, which the gateway requires', async () => {
		const result = await run(
			sendParameters('13900001002', { templateId: Number(emulator.demo.templateWithoutVariablesId), variablesInput: 'none' }),
		);
		expect(result.error).toBeUndefined();
		expect(result.json()[0].taskId).toEqual(expect.any(String));
	});

	it('Send accepts variables as JSON', async () => {
		const result = await run(sendParameters('13900001003', { variablesInput: 'json', variablesJson: '{"code": 5678}' }));
		expect(result.error).toBeUndefined();
	});

	it('Get Status shows the status with a label and one receiveDate spelling', async () => {
		const [sent] = (await run(sendParameters('13900001004'))).json();
		const read = async () => (await run({ resource: 'message', operation: 'getStatus', taskId: sent.taskId as string })).json()[0];
		const first = await read();
		expect(first).toMatchObject({ id: sent.taskId, status: 0, statusLabel: 'sending', phone: '13900001004' });
		emulator.finishPending('delivery', sent.taskId as string);
		const final = await read();
		expect(final).toMatchObject({ status: 1, statusLabel: 'delivered' });
		expect(final.receiveDate).toMatch(/^\d{4}-\d{2}-\d{2} /);
		expect(final.reveiveDate).toBeUndefined();
	});

	it.each([
		[0, 'delivered', 1],
		[1, 'failed', -1],
	])('Send and Check Delivery with failure share %s outputs %s', async (share, outcome, status) => {
		// Delivered at once after the send; the node's polling finds it whatever its timing.
		emulator.configure({ deliveryFailureShare: share, deliveryDelayMs: 0 });
		const result = await run(sendParameters(`1390000200${share}`, { operation: 'sendAndCheck', pollIntervalSeconds: 0.1, waitTimeoutSeconds: 10 }));
		expect(result.error).toBeUndefined();
		const [answer] = result.json() as Array<{ outcome: string; task: IDataObject }>;
		expect(answer.outcome).toBe(outcome);
		expect(answer.task.status).toBe(status);
	});

	it('Send and Check Delivery outputs "sending" when the wait times out', async () => {
		// Delivery never ends during this test (an hour's delay, never finished).
		const result = await run(sendParameters('13900002009', { operation: 'sendAndCheck', pollIntervalSeconds: 0.2, waitTimeoutSeconds: 1 }));
		expect(result.json()[0].outcome).toBe('sending');
	});
});

describe('local rules cost nothing', () => {
	const cases: Array<[string, INodeParameters, RegExp]> = [
		['phone', { phone: '12345' }, /Phone Number "12345" is not a domestic mobile number/],
		['landline as SMS phone', { phone: '010-12345678' }, /Phone Number/],
		['variable name characters', { variables: { variable: [{ name: 'code1', value: '1' }] } }, /Variables "code1" may use only letters and underscore/],
		['reserved variable name', { variables: { variable: [{ name: 'mobile', value: '1' }] } }, /"mobile" is reserved/],
		['more than 8 variables', { variables: { variable: 'abcdefghi'.split('').map((name) => ({ name, value: '1' })) } }, /has 9 variables; a template allows at most 8/],
		['value longer than 50', { variables: { variable: [{ name: 'code', value: 'x'.repeat(51) }] } }, /value of "code" has 51 characters; at most 50/],
		['variables JSON', { variablesInput: 'json', variablesJson: '{"code": ' }, /Variables is not valid JSON/],
		['signature ID 0 (version 1 number field)', { signId: 0 }, /Item 1: Signature ID is 0/],
		['signature ID empty from an expression', { signId: '={{ "" }}' }, /Item 1: Signature ID is empty/],
		['template ID empty from an expression', { templateId: '={{ " " }}' }, /Item 1: Template ID is empty/],
		['template ID not a number', { templateId: '12a' }, /Item 1: Template ID "12a" is not a positive whole number/],
		// Number() would read these as 16, 100, 3 and 100000000000000000000: another template, or none.
		['template ID in hexadecimal', { templateId: '0x10' }, /Item 1: Template ID "0x10" is not a positive whole number written with the digits 0-9/],
		['template ID with an exponent', { templateId: '1e2' }, /Item 1: Template ID "1e2" is not a positive whole number/],
		['signature ID in binary', { signId: '0b11' }, /Item 1: Signature ID "0b11" is not a positive whole number/],
		['signature ID past the safe integers', { signId: '99999999999999999999' }, /Item 1: Signature ID "99999999999999999999" is too large to be an ID/],
		// A built-in property name is one name like any other: given once, it is not "twice"; missing, it is missing.
		['variable named constructor given once', { variables: { variable: [{ name: 'constructor', value: '1' }] }, sendOptions: { templateContent: '验证码${code}' } }, /Variables has no value for \$\{code\}, which the template uses/],
		['template ${toString} without a value', { variables: { variable: [{ name: 'code', value: '1' }] }, sendOptions: { templateContent: '验证码${code}${toString}' } }, /has no value for \$\{toString\}/],
	];
	it.each(cases)('Send: %s', async (_name, overrides, message) => {
		// Version 1's number field takes 0; later versions flag an empty or 0 ID as missing in the form.
		const result = await run(sendParameters('13900003001', overrides), [{}], {}, _name.includes('version 1 number field') ? 1 : undefined);
		expect(result.error?.message).toMatch(message);
		expect(result.error?.description).toMatch(/No call was made/);
		if (/ ID /.test(String(result.error?.message))) expect(result.error?.description).toMatch(/find it in the gateway console, or with (Signature|Template) → Get/);
		expect(emulator.ledger().totals.calls).toBe(0);
	});

	it('Send 1.1: a fresh node with empty Signature ID and Template ID is flagged as missing both, before any call', async () => {
		await expect(run(sendParameters('13900003001', { signId: '', templateId: '' }), [{}], {}, 1.1)).rejects.toThrow(/Parameter "Signature ID" is required[\s\S]*Parameter "Template ID" is required/);
		expect(emulator.ledger().totals.calls).toBe(0);
	});

	it('Send 1.4: a fresh node with nothing picked is flagged as missing Signature and Template, before any call', async () => {
		const empty = { __rl: true, mode: 'list', value: '' };
		await expect(run(sendParameters('13900003001', { signId: empty, templateId: empty }))).rejects.toThrow(/Parameter "Signature" is required[\s\S]*Parameter "Template" is required/);
		expect(emulator.ledger().totals.calls).toBe(0);
	});

	const reviewedCases: Array<[string, INodeParameters, RegExp]> = [
		['signature brackets', { resource: 'signature', operation: 'create', name: '【数据网关】', remark: 'r' }, /Signature Text contains "【"/],
		['signature special characters', { resource: 'signature', operation: 'create', name: '数据-网关', remark: 'r' }, /contains "-"/],
		['template brackets', { resource: 'template', operation: 'create', name: 'n', content: '[公司]您的验证码${code}', remark: 'r' }, /Content contains "\["/],
		['template unclosed variable', { resource: 'template', operation: 'create', name: 'n', content: '验证码${code', remark: 'r' }, /without a closing/],
		['template reserved variable', { resource: 'template', operation: 'create', name: 'n', content: '您好${nick}', remark: 'r' }, /"nick" is reserved/],
		['template digits in variable', { resource: 'template', operation: 'create', name: 'n', content: '您好${name1}', remark: 'r' }, /"name1" may use only letters/],
		['template 9 variables', { resource: 'template', operation: 'create', name: 'n', content: '${a}${b}${c}${d}${e}${f}${g}${h}${i}', remark: 'r' }, /has 9 variables/],
		['empty description', { resource: 'signature', operation: 'create', name: '数据网关', remark: ' ' }, /Description is empty/],
		['update without ID', { resource: 'template', operation: 'update', id: 0, name: 'n', remark: 'r' }, /Template ID is 0/],
		['delete with a hexadecimal ID from an expression', { resource: 'template', operation: 'delete', id: '={{ "0x10" }}' }, /Template ID "0x10" is not a positive whole number/],
		['get with an ID past the safe integers', { resource: 'signature', operation: 'get', id: '={{ "99999999999999999999" }}' }, /Signature ID "99999999999999999999" is too large/],
	];
	it.each(reviewedCases)('%s', async (_name, parameters, message) => {
		const result = await run(parameters);
		expect(result.error?.message).toMatch(message);
		expect(emulator.ledger().totals.calls).toBe(0);
	});

	it('per-number limits: a send that would break them is an error item and is not sent', async () => {
		const result = await run(sendParameters('={{ $json.phone }}'), [{ phone: '13900004001' }, { phone: '13900004001' }, { phone: '13900004002' }], {
			continueOnFail: true,
		});
		const [first, second, third] = result.json();
		expect(first.taskId).toEqual(expect.any(String));
		expect(second.error).toMatch(/Item 2: Phone Number not sent: this would be message 2 to 13900004001 in this calendar minute; this node allows 1/);
		expect(third.taskId).toEqual(expect.any(String));
		expect(result.items().map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(sendCalls()).toBe(2);
	});

	it('per-number limits are configurable', async () => {
		const result = await run(sendParameters('={{ $json.phone }}', { sendOptions: { perMinute: 2 } }), [{ phone: '13900004003' }, { phone: '13900004003' }], {
			continueOnFail: true,
		});
		// The node allows 2; the gateway's own default of 1 a minute then refuses the second.
		expect(result.json()[1].error).toMatch(/frequency limit/);
		expect(sendCalls()).toBe(2);
	});
});

describe('at most once', () => {
	it('Retry On Fail with a failing second item: the first item is sent once', async () => {
		const result = await run(
			sendParameters('={{ $json.phone }}', { templateId: '={{ $json.template }}' }),
			[
				{ phone: '13900005001', template: Number(emulator.demo.templateId) },
				{ phone: '13900005002', template: 999999 },
			],
			{ retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
		);
		expect(result.error?.message).toMatch(/^Item 2: Send SMS failed: gateway code \d+: the template is missing or not approved/);
		// Item 1 once; item 2 was refused by the gateway on each of the 3 tries, so asking again was safe.
		expect(sendCalls()).toBe(4);
		const sentToFirst = emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call' && call.code === 0);
		expect(sentToFirst).toHaveLength(1);
	});

	it('a send whose outcome is unknown is reported with how to check it, and is not repeated by Retry On Fail', async () => {
		emulator.setFaults({ sequence: [{ kind: 'reset', path: '/sms/send' }] });
		const result = await run(sendParameters('13900005003'), [{}], { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 });
		expect(result.error?.message).toMatch(/Send SMS failed: .*(may have reached the gateway|may or may not have been sent)/);
		expect(result.error?.description).toMatch(/Get Status/);
		expect(sendCalls()).toBe(1);
	});
	it('Retry On Fail re-running a signature Create does not create a second signature', async () => {
		// One of the two creates meets a 500: its outcome is unknown, so neither try repeats it.
		emulator.setFaults({ sequence: [{ kind: '500', path: '/sms/add_sign' }] });
		const result = await run(
			{ resource: 'signature', operation: 'create', name: '={{ $json.name }}', remark: '验证码' },
			[{ name: '数据网关' }, { name: '网关数据' }],
			{ retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
		);
		expect(result.error?.message).toMatch(/the change may or may not have been made/);
		expect(result.error?.description).toMatch(/Signature > Get/);
		expect(emulator.ledger().byPath['/sms/add_sign']?.calls).toBe(2);
	});
});

describe('signature and template lifecycle (docs/gateway-api.md#states)', () => {
	async function status(resource: string, id: unknown) {
		return (await run({ resource, operation: 'get', id: Number(id) })).json()[0];
	}

	it.each([
		['signature', { name: 'Contest签名', remark: '测试用途' }, { name: '数据网关', remark: '验证码，网站 https://example.com' }],
		['template', { name: '推广', content: '低息贷款${amount}', remark: 'r' }, { name: '验证码', content: '您的验证码是${code}', remark: '登录' }],
	])('%s: create -> rejected -> update -> approved -> update refused -> delete', async (resource, rejected, fixed) => {
		const created = (await run({ resource, operation: 'create', ...rejected })).json()[0];
		const id = Number(created.id);
		expect(created.id).toEqual(expect.any(String));
		expect((await status(resource, created.id)).statusLabel).toBe('under review');
		emulator.finishPending('review', String(created.id));
		const refused = await status(resource, created.id);
		expect(refused).toMatchObject({ status: 2, statusLabel: 'rejected', error: expect.any(String) });

		const updated = await run({ resource, operation: 'update', id, ...fixed });
		expect(updated.error).toBeUndefined();
		expect((await status(resource, created.id)).statusLabel).toBe('under review');
		emulator.finishPending('review', String(created.id));
		expect((await status(resource, created.id)).statusLabel).toBe('approved');

		const notAllowed = await run({ resource, operation: 'update', id, ...fixed });
		expect(notAllowed.error?.message).toMatch(/^Update (Signature|Template) failed: gateway code \d+/);
		expect(notAllowed.error?.description).toMatch(/An approved (signature|template) cannot be modified: delete it and create a new one/);

		const deleted = await run({ resource, operation: 'delete', id });
		expect(deleted.json()).toEqual([{ deleted: true, id }]);
		expect((await run({ resource, operation: 'get', id })).error?.message).toMatch(/not found/);
	});

	it.each(['signature', 'template'])('%s: delete of one under review is refused, with the rule; after its review it works', async (resource) => {
		const created = (await run({ resource, operation: 'create', name: '审核中', content: '内容${code}', remark: 'r' })).json()[0];
		const refused = await run({ resource, operation: 'delete', id: Number(created.id) });
		expect(refused.error?.message).toMatch(/^Delete (Signature|Template) failed: gateway code \d+: the (signature|template) is under review and cannot be deleted now/);
		expect(refused.error?.description).toMatch(/Approved and rejected (signature|template)s can be deleted; one under review may be refused until its review ends/);
		emulator.finishPending('review', String(created.id));
		expect((await run({ resource, operation: 'delete', id: Number(created.id) })).error).toBeUndefined();
	});

	it.each(['signature', 'template'])('%s: Update refused for another reason keeps the gateway\'s message and says nothing about approved ones', async (resource) => {
		const result = await run({ resource, operation: 'update', id: 999999, name: '数据网关', content: '内容${code}', remark: 'r' });
		expect(result.error?.message).toMatch(/^Update (Signature|Template) failed: gateway code \d+: (signature|template) not found/);
		expect(result.error?.description).not.toMatch(/approved/);
	});

	it('with Read Template and Signature, a template under review stops the item before the paid send', async () => {
		const created = (await run({ resource: 'template', operation: 'create', name: 'n', content: '新模板${code}', remark: 'r' })).json()[0];
		const result = await run(sendParameters('13900006002', { templateId: Number(created.id), sendOptions: { readTemplate: true } }));
		expect(result.error?.message).toMatch(/Template ID \d+ is under review/);
		expect(result.error?.description).toMatch(/The message was not sent/);
		expect(sendCalls()).toBe(0);
	});

	it.each([
		['a missing value', { variables: { variable: [{ name: 'other', value: '1' }] } }, /has no value for \$\{code\}/],
		['a value the template does not use', { variables: { variable: [{ name: 'code', value: '1' }, { name: 'extra', value: '2' }] } }, /"extra", which the template does not use/],
	])('variables checked against the known template text: %s is an error before sending', async (_label, extra, expected) => {
		const result = await run(sendParameters('13900006003', { ...extra, sendOptions: { templateContent: '您的验证码是${code}' } }));
		expect(result.error?.message).toMatch(expected);
		expect(sendCalls()).toBe(0);
	});

	it('send is refused by the gateway with a template still under review', async () => {
		const created = (await run({ resource: 'template', operation: 'create', name: 'n', content: '新模板${code}', remark: 'r' })).json()[0];
		const result = await run(sendParameters('13900006001', { templateId: Number(created.id) }));
		expect(result.error?.message).toMatch(/not approved/);
	});
});

describe('segments (70 / 67 rule, signature and its 【】 included)', () => {
	it.each([
		[70, 1],
		[71, 2],
		[134, 2],
		[135, 3],
	])('%s characters are %s segment(s)', async (length, segments) => {
		// Signature 【数据网关】 is 6 characters with the brackets, which count; the rest is template text.
		const result = await run(
			sendParameters('13900007001', {
				templateId: Number(emulator.demo.templateWithoutVariablesId),
				variablesInput: 'none',
				sendOptions: { signatureText: '数据网关', templateContent: '字'.repeat(length - 6) },
			}),
		);
		expect(result.json()[0]).toMatchObject({ length, segments, estimatedCostYuan: Math.round(segments * 0.035 * 10000) / 10000 });
	});
});
