import type { IDataObject, ILoadOptionsFunctions, INode, INodeParameters, ResourceMapperValue } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { TEMPLATE_VARIABLES_METHOD } from '../../nodes/DataGatewaySms/actions/message/templateVariables';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow, type WorkflowRunResult } from '../harness/workflow';

/** Reviews and deliveries end only when a test finishes them: no test races a timer. */
const HOUR = 3_600_000;
let emulator: Emulator;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();
const credential = () => ({ appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url });

function runSms(parameters: INodeParameters, items: IDataObject[], typeVersion?: number) {
	return runWorkflow({ steps: [{ name: 'SMS', type: sms, parameters, typeVersion }], items, credentials: { dataGatewayApi: credential() } });
}
const hints = (result: WorkflowRunResult) => (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => ({ type: hint.type, message: hint.message }));
const sendCalls = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;

/** What the form saves for "From the Template" once the template's variables were loaded. */
const fromTemplate = (value: Record<string, string>) => ({
	variablesInput: 'template',
	templateVariables: {
		mappingMode: 'defineBelow',
		value,
		matchingColumns: [],
		schema: [{ id: 'code', displayName: 'code', required: true, defaultMatch: false, display: true, type: 'string' }],
		attemptToConvertTypes: false,
		convertFieldsToString: true,
	} satisfies ResourceMapperValue,
});

/** The resource mapper's method as the editor calls it, with the node's current Template ID. */
function loadVariables(templateId: unknown) {
	const context = {
		getCurrentNodeParameter: (name: string) => (name === 'templateId' ? templateId : undefined),
		getCredentials: async () => credential(),
		getNode: () => ({ name: 'SMS', typeVersion: 1.2 }) as INode,
	} as unknown as ILoadOptionsFunctions;
	return sms.methods.resourceMapping[TEMPLATE_VARIABLES_METHOD].call(context);
}

describe('Template Variables "From the Template"', () => {
	it("offers the chosen template's variables by name, read with the free template query", async () => {
		const fields = await loadVariables(emulator.demo.templateId);
		expect(fields.fields).toEqual([expect.objectContaining({ id: 'code', displayName: 'code', required: true, type: 'string' })]);
		expect(emulator.ledger().byPath['/sms/query_template']).toMatchObject({ calls: 1, billedCalls: 0 });
	});

	it('says what to do when there is no Template ID yet, or it is an expression, and that a template has no variables', async () => {
		// A new node shows nothing there (the Template field is flagged); a template given as an expression is told to be fixed.
		expect(await loadVariables('')).toEqual({ fields: [], emptyFieldsNotice: '' });
		expect(await loadVariables('={{ $json.template }}')).toEqual({ fields: [], emptyFieldsNotice: expect.stringMatching(/^Pick a template above: its variables appear here\./) });
		expect(await loadVariables(emulator.demo.templateWithoutVariablesId)).toEqual({ fields: [], emptyFieldsNotice: expect.stringMatching(/has no variables/) });
		expect(emulator.ledger().byPath['/sms/query_template']?.calls).toBe(1);
	});

	it('is what a new node (1.2) opens on; its values, expressions included, are sent', async () => {
		// Variables Input is left at its default, as in a node just added.
		const { variablesInput: _keyValue, variables: _pairs, ...ids } = sendParameters(emulator);
		const result = await runSms({ ...ids, templateVariables: fromTemplate({ code: '={{ $json.code }}' }).templateVariables }, [{ phone: '13900031001', code: '4711' }]);
		expect(result.error).toBeUndefined();
		expect(result.json()[0]).toMatchObject({ taskId: expect.any(String), phone: '13900031001' });
		const sent = emulator.ledger().calls.find((call) => call.path === '/sms/send');
		expect(JSON.stringify(sent)).toContain('4711');
	});

	it('a variable left empty is named before anything is sent', async () => {
		const result = await runSms({ ...sendParameters(emulator), ...fromTemplate({ code: '' }) }, [{ phone: '13900031002' }]);
		expect(result.error?.message).toMatch(/Item 1: Variables has no value for \$\{code\}/);
		expect(sendCalls()).toBe(0);
	});

	it('with both IDs left at 0, one error names the item once and both fields', async () => {
		const result = await runSms(sendParameters(emulator, { signId: 0, templateId: 0 }), [{ phone: '13900031004' }], 1);
		expect(result.error?.message).toBe('Item 1: Signature ID and Template ID are both empty or 0');
		expect(result.error?.description).toMatch(/Signature → Get and Template → Get/);
		expect(sendCalls()).toBe(0);
	});

	it('a saved node (1.1) keeps Key-Value Pairs as its default', async () => {
		const { variablesInput: _default, ...saved } = sendParameters(emulator);
		const result = await runSms(saved, [{ phone: '13900031003' }], 1.1);
		expect(result.error).toBeUndefined();
		expect(result.json()[0].taskId).toEqual(expect.any(String));
	});
});

describe('Preview: the exact message, its length, segments and cost, and nothing sent', () => {
	const preview = (extra: INodeParameters = {}) => sendParameters(emulator, { operation: 'preview', variables: { variable: [{ name: 'code', value: '={{ $json.code }}' }] }, ...extra });

	it('per item: signature and template with the item values, with the length and cost a send would have', async () => {
		const result = await runSms(preview(), [
			{ phone: '13900032001', code: '123456' },
			{ phone: '13900032002', code: 'x'.repeat(50) },
		]);
		expect(result.error).toBeUndefined();
		const [short, long] = result.json();
		expect(short).toEqual({
			phone: '13900032001',
			signId: Number(emulator.demo.signatureId),
			templateId: Number(emulator.demo.templateId),
			message: '【数据网关】您的验证码是123456，5分钟内有效。',
			length: 26,
			segments: 1,
			estimatedCostYuan: 0.035,
			sent: false,
		});
		expect(long).toMatchObject({ length: 70, segments: 1 });
		expect(sendCalls()).toBe(0);
		// The signature and template are read once for the whole batch, free.
		expect(emulator.ledger().byPath['/sms/query_sign']).toMatchObject({ calls: 1, billedCalls: 0 });
		expect(emulator.ledger().byPath['/sms/query_template']).toMatchObject({ calls: 1, billedCalls: 0 });
		expect(hints(result)).toEqual([{ type: 'info', message: 'Preview only: no SMS sent, 0 yuan; sending these 2 SMS would cost 0.07 yuan when delivered (2 message segments)' }]);
	});

	it('the length counts the signature with its brackets: 70 characters is still one segment', async () => {
		const result = await runSms(preview(), [{ phone: '13900032003', code: 'y'.repeat(50) }]);
		// 【数据网关】 6 + 您的验证码是 6 + 50 + ，5分钟内有效。 8 = 70: the longest single message (docs/gateway-api.md, Limits).
		expect(result.json()[0]).toMatchObject({ length: 70, segments: 1, estimatedCostYuan: 0.035 });
		// One message reads as one, not "these 1 SMS".
		expect(hints(result)).toEqual([{ type: 'info', message: 'Preview only: no SMS sent, 0 yuan; sending this SMS would cost 0.035 yuan when delivered (1 message segment)' }]);
	});

	it('an item the send would refuse is an error item, before paying, naming why', async () => {
		const result = await runWorkflow({
			steps: [{ name: 'SMS', type: sms, parameters: preview({ variables: { variable: [{ name: 'other', value: '1' }] } }), settings: { onError: 'continueRegularOutput' } }],
			items: [{ phone: '13900032004' }],
			credentials: { dataGatewayApi: credential() },
		});
		expect(result.json()[0]).toMatchObject({ phone: '13900032004', error: expect.stringMatching(/Item 1: Variables has no value for \$\{code\}/) });
		expect(sendCalls()).toBe(0);
	});
});

describe('a repeat of an earlier execution is said as a warning, with how to send again', () => {
	it('the second manual run of the same send warns; the bill line stays', async () => {
		const items = [{ phone: '13900033001' }];
		const first = await runSms(sendParameters(emulator), items);
		expect(hints(first).filter((hint) => hint.type === 'warning')).toEqual([]);
		const second = await runSms(sendParameters(emulator), items);
		expect(second.json()[0]).toMatchObject({ sent: false, taskId: null });
		expect(hints(second)).toEqual([
			{ type: 'info', message: 'No SMS sent; 1 repeat of an earlier execution skipped' },
			{ type: 'warning', message: expect.stringMatching(/^1 SMS not sent: an earlier execution sent the same message .* set Options > Records: Repeat Window \(Minutes\) to 0\.$/) },
		]);
		expect(sendCalls()).toBe(1);
	});
});
