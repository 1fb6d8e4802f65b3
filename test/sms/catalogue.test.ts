import type { IDataObject, ILoadOptionsFunctions, INode, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { CHOOSE_FIRST, TEMPLATE_VARIABLES_METHOD } from '../../nodes/DataGatewaySms/actions/message/templateVariables';
import { SEARCH_METHODS } from '../../nodes/DataGatewaySms/actions/catalogue/pickByName';
import { MAX_IMPORT_IDS } from '../../nodes/DataGatewaySms/actions/catalogue/import';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';
import { serveWebhook, type WebhookServer } from '../trigger/webhookServer';

/**
 * The catalogue of signatures and templates (issue 35) as a user meets it: what the node creates,
 * reads, imports or deletes, and what a review callback at the trigger says, shows in the pickers'
 * lists; Send 1.4 sends what was picked; saved nodes of every earlier version send as before.
 */
const HOUR = 3_600_000;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
let emulator: Emulator;
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();
const credential = () => ({ appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxRetries: 0 });
let trigger: WebhookServer | undefined;
afterEach(async () => {
	await trigger?.close();
	trigger = undefined;
});

function runSms(parameters: INodeParameters, items: IDataObject[] = [{}], typeVersion?: number) {
	return runWorkflow({ steps: [{ name: 'SMS', type: sms, parameters, typeVersion }], items, credentials: { dataGatewayApi: credential() } });
}

/** The editor's call of a form method, with the node's current parameters. */
function formContext(parameters: Record<string, unknown> = {}) {
	return {
		getCurrentNodeParameter: (name: string) => parameters[name],
		getCredentials: async () => credential(),
		getNode: () => ({ name: 'SMS', typeVersion: 1.4, parameters: {} }) as unknown as INode,
	} as unknown as ILoadOptionsFunctions;
}
const list = async (kind: 'signature' | 'template', filter?: string) =>
	(await sms.methods.listSearch[SEARCH_METHODS[kind]].call(formContext(), filter)).results;
const queries = (path: string) => emulator.ledger().byPath[path]?.calls ?? 0;

async function until(condition: () => boolean) {
	for (let wait = 0; wait < 500 && !condition(); wait++) await new Promise((resolve) => setTimeout(resolve, 20));
	expect(condition()).toBe(true);
}

const createTemplate = (name: string, content: string) =>
	runSms({ resource: 'template', operation: 'create', name, content, remark: 'login codes for example.com' });

describe('the catalogue fills from what the node does', () => {
	it('a created template is listed by name as under review, then approved after the review callback, without a query', async () => {
		const created = await createTemplate('登录验证', '您的登录验证码是${code}');
		expect(created.error).toBeUndefined();
		const id = String(created.json()[0].id);
		expect(await list('template')).toEqual([expect.objectContaining({ value: id, name: `登录验证 · #${id} · under review · 您的登录验证码是\${code}` })]);

		trigger = await serveWebhook(new DataGatewaySmsTrigger(), {}, { mode: 'webhook', typeVersion: 1.2 });
		emulator.configure({ callbackUrl: trigger.url });
		const queriesBefore = queries('/sms/query_template');
		emulator.finishPending('review', id);
		await until(() => trigger!.starts.length > 0);
		expect(trigger.logs).toEqual([]);
		expect(await list('template')).toEqual([{ value: id, name: `登录验证 · #${id} · 您的登录验证码是\${code}` }]);
		expect(queries('/sms/query_template')).toBe(queriesBefore);
	});

	it('approved ones come first; search finds by name, ID, text and status; a deleted one leaves the list', async () => {
		const pending = String((await createTemplate('Aaa pending', '您的订单${order}已发货')).json()[0].id);
		await runSms({ resource: 'template', operation: 'get', id: emulator.demo.templateId });
		const names = (await list('template')).map((entry) => entry.value);
		expect(names).toEqual([String(emulator.demo.templateId), pending]);
		expect((await list('template', 'under review')).map((entry) => entry.value)).toEqual([pending]);
		expect((await list('template', '已发货')).map((entry) => entry.value)).toEqual([pending]);
		expect((await list('template', String(emulator.demo.templateId))).map((entry) => entry.value)).toEqual([String(emulator.demo.templateId)]);

		// An approved template may be deleted; the list no longer offers it (the demo template stays for the other tests).
		const approved = String((await createTemplate('Old', '旧模板${x}')).json()[0].id);
		emulator.finishPending('review', approved);
		expect((await list('template')).map((entry) => entry.value)).toContain(approved);
		const deleted = await runSms({ resource: 'template', operation: 'delete', id: approved });
		expect(deleted.error).toBeUndefined();
		expect((await list('template')).map((entry) => entry.value)).toEqual([String(emulator.demo.templateId), pending]);
	});

	it('a rejected one says so, with the gateway reason', async () => {
		const created = await createTemplate('抽奖', '您的lottery号码是${code}');
		expect(created.error).toBeUndefined();
		const id = String(created.json()[0].id);
		emulator.finishPending('review', id);
		await runSms({ resource: 'template', operation: 'get', id });
		expect((await list('template'))[0].name).toMatch(new RegExp(`^抽奖 · #${id} · rejected: 模板内容涉及禁止发送的内容`));
	});
});

describe('an empty list says how to fill it', () => {
	it('one entry that picks nothing names Create, Import and where the IDs are; a search without a match says so', async () => {
		const [guide, ...rest] = await list('signature');
		expect(rest).toHaveLength(0);
		expect(guide).toMatchObject({ value: '', url: expect.stringContaining('#pick-signatures-and-templates-by-name-sms-14') });
		expect(guide.name).toBe("No signatures yet. Fill the list: Signature → Create, or Signature → Import to Catalogue with IDs from the gateway console's SMS settings. Or choose By ID.");
		expect((await list('template', 'code'))[0].name).toMatch(/^No template matches "code"\. Fill the list: Template → Create/);
	});
});

describe('Preview', () => {
	it('what Preview read is listed by name', async () => {
		const result = await runSms({ ...sendParameters(emulator), operation: 'preview' }, [{ phone: '13900035010' }]);
		expect(result.error).toBeUndefined();
		expect((await list('signature')).map((entry) => entry.value)).toEqual([String(emulator.demo.signatureId)]);
		expect((await list('template')).map((entry) => entry.value)).toEqual([String(emulator.demo.templateId)]);
	});
});

describe('Import to Catalogue', () => {
	const billOf = (result: Awaited<ReturnType<typeof runSms>>) => (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => hint.message);

	it('reads a list and ranges with the free query, and sums up what it found and what it did not in one item (1.5)', async () => {
		const result = await runSms({ resource: 'template', operation: 'import', ids: `${emulator.demo.templateId}, 900000-900002` });
		expect(result.error).toBeUndefined();
		const [output, ...more] = result.json();
		expect(more).toHaveLength(0);
		expect(output).toMatchObject({ read: 4, imported: 1, found: [{ id: String(emulator.demo.templateId), statusLabel: 'approved' }], notFound: '900000-900002' });
		expect(output.summary).toBe(
			`Found 1 of 4 template IDs: ${emulator.demo.templateId} "验证码". Not found: 900000-900002; the gateway console's SMS settings list your templates with their IDs.`,
		);
		expect(output.gatewaySaid).toMatch(/not found/);
		expect((await list('template')).map((entry) => entry.value)).toEqual([String(emulator.demo.templateId)]);
		expect(emulator.ledger().byPath['/sms/query_template']).toMatchObject({ calls: 4, billedCalls: 0 });
	});

	it('its bill counts every query the gateway received, found or not (50 IDs: 50 free calls, not 1)', async () => {
		const result = await runSms({ resource: 'signature', operation: 'import', ids: '1-50' });
		expect(queries('/sms/query_sign')).toBe(50);
		expect(billOf(result)).toContain('50 free calls, 0 yuan; 0 found; 50 not found');
		expect(result.json()[0]).toMatchObject({ read: 50, imported: 0, notFound: '1-50' });
	});

	it('nodes saved with 1.4 keep one entry per ID not found, with the gateway words', async () => {
		const result = await runSms({ resource: 'template', operation: 'import', ids: `${emulator.demo.templateId}, 900000-900002` }, [{}], 1.4);
		const [output] = result.json();
		expect(output.summary).toBeUndefined();
		expect((output.notFound as IDataObject[]).map((entry) => entry.id)).toEqual(['900000', '900001', '900002']);
		expect((output.notFound as IDataObject[])[0].message).toMatch(/not found/);
	});

	it(`refuses more than ${MAX_IMPORT_IDS} IDs a run, and a bad range, before any query`, async () => {
		const tooMany = await runSms({ resource: 'signature', operation: 'import', ids: `1-${MAX_IMPORT_IDS}, ${MAX_IMPORT_IDS + 1}` });
		expect(tooMany.error?.message).toBe(`Item 1: Signature IDs would bring this run to ${MAX_IMPORT_IDS + 1} IDs, more than ${MAX_IMPORT_IDS}`);
		const backwards = await runSms({ resource: 'signature', operation: 'import', ids: '9-3' });
		expect(backwards.error?.message).toMatch(/Item 1: Signature IDs has "9-3"/);
		expect(queries('/sms/query_sign')).toBe(0);
	});
});

describe('the form says what it read', () => {
	const loadVariables = (templateId: unknown) => sms.methods.resourceMapping[TEMPLATE_VARIABLES_METHOD].call(formContext({ templateId }));

	it('a template ID that does not exist says "Template 502 not found" with the gateway words', async () => {
		const fields = await loadVariables({ __rl: true, mode: 'id', value: '502' });
		expect(fields).toEqual({ fields: [], emptyFieldsNotice: expect.stringMatching(/^Template 502 not found \(the gateway says "template not found"\)/) });
	});

	it("a picked template's variables are read from the picker; one under review says so with its text", async () => {
		const picked = await loadVariables({ __rl: true, mode: 'list', value: String(emulator.demo.templateId), cachedResultName: 'x' });
		expect(picked.fields.map((field) => field.id)).toEqual(['code']);
		const pending = String((await createTemplate('通知', '您的快递${no}到了')).json()[0].id);
		const notice = (await loadVariables({ __rl: true, mode: 'id', value: pending })).emptyFieldsNotice;
		expect(notice).toBe(`Template ${pending} "通知" is under review: it can be sent once approved. It reads: 您的快递\${no}到了`);
		// What the form read is listed too.
		expect((await list('template')).map((entry) => entry.value)).toEqual([String(emulator.demo.templateId), pending]);
	});
});

describe('the form before a template is chosen (seen in the editor walk-through)', () => {
	it('before a template is chosen the area stays empty (n8n sends resolved parameters, so the method cannot tell a reload may fail); the field hint says what to do', async () => {
		const form = (parameters: Record<string, unknown>) => ({ ...formContext(parameters), getCurrentNodeParameters: () => parameters }) as unknown as ILoadOptionsFunctions;
		const notPicked = { templateId: { __rl: true, mode: 'list', value: '' } };
		expect((await sms.methods.resourceMapping[TEMPLATE_VARIABLES_METHOD].call(form({ ...notPicked, phone: '13900035010' }))).emptyFieldsNotice).toBe('');
		const asExpression = (await sms.methods.resourceMapping[TEMPLATE_VARIABLES_METHOD].call(form({ templateId: '={{ $json.template }}' }))).emptyFieldsNotice;
		expect(asExpression).toBe(CHOOSE_FIRST);
		const mode = sms.description.properties.find((property) => property.name === 'variablesInput' && property.default === 'template');
		expect(mode?.hint).toBe('Variables appear below once a template is picked; if not, click Execute previous nodes');
	});
});

describe('Send picks by name in 1.4; saved nodes keep their ID fields', () => {
	const picked = (id: string | number) => ({ __rl: true, mode: 'list', value: String(id), cachedResultName: 'picked' });

	it('Send 1.4 sends the picked signature and template', async () => {
		const result = await runSms(
			sendParameters(emulator, { signId: picked(emulator.demo.signatureId), templateId: { __rl: true, mode: 'id', value: String(emulator.demo.templateId) } }),
			[{ phone: '13900035001' }],
			1.4,
		);
		expect(result.error).toBeUndefined();
		expect(result.json()[0]).toMatchObject({ taskId: expect.any(String), signId: Number(emulator.demo.signatureId), templateId: Number(emulator.demo.templateId) });
	});

	it('a wrong ID in a picker is named by its field', async () => {
		const result = await runSms(sendParameters(emulator, { signId: picked(emulator.demo.signatureId), templateId: { __rl: true, mode: 'id', value: '={{ $json.template }}' } }), [{ phone: '13900035002', template: 'abc' }], 1.4);
		expect(result.error?.message).toBe('Item 1: Template "abc" is not a positive whole number written with the digits 0-9');
		expect(queries('/sms/send')).toBe(0);
	});

	it.each([1, 1.1, 1.2, 1.3])('a workflow saved with version %s sends as before', async (typeVersion) => {
		const parameters = sendParameters(emulator);
		const result = await runSms(typeVersion === 1 ? parameters : { ...parameters, signId: String(parameters.signId), templateId: String(parameters.templateId) }, [{ phone: '13900035003' }], typeVersion);
		expect(result.error).toBeUndefined();
		expect(result.json()[0]).toMatchObject({ taskId: expect.any(String), phone: '13900035003' });
	});
});

describe("npm start's sandbox", () => {
	it("opens with the emulator's approved demo signature and templates in the lists, by name", async () => {
		const { seedDemoCatalogue } = await import('../../scripts/seedCatalogue');
		const said = await seedDemoCatalogue(String(process.env.N8N_USER_FOLDER), emulator.url, emulator.demo.appCode, emulator.demo);
		const { signatureId, templateId, templateWithoutVariablesId } = emulator.demo;
		expect(said).toBe(`signature ${signatureId} "数据网关"; templates ${templateId} "验证码", ${templateWithoutVariablesId} "通知"`);
		expect((await list('signature')).map((entry) => entry.name)).toEqual([`数据网关 · #${signatureId}`]);
		expect((await list('template')).map((entry) => entry.name)).toEqual([`通知 · #${templateWithoutVariablesId} · 您的订单已发货，请注意查收。`, `验证码 · #${templateId} · 您的验证码是\${code}，5分钟内有效。`]);
	});
});

describe('values survive a template change (issue 42)', () => {
	/** The editor's calls for one node, `parameters` as the form holds them at that moment. */
	const nodeForm = (parameters: Record<string, unknown>) =>
		({ ...formContext(parameters), getNode: () => ({ id: 'node-keeps-values', name: 'Send Code', typeVersion: 1.5, parameters: {} }) as unknown as INode }) as ILoadOptionsFunctions;
	const picked = (id: string) => ({ __rl: true, mode: 'list', value: id });

	it('a value typed for ${code} comes back when the template changes to one without it and back; the one without names it as kept', async () => {
		const { templateId, templateWithoutVariablesId } = emulator.demo;
		const typed = { templateId: picked(String(templateId)), templateVariables: { mappingMode: 'defineBelow', value: { code: '={{ $json.code }}' } } };
		// The user opens the Template list to pick another: the form's values travel with the request.
		await sms.methods.listSearch[SEARCH_METHODS.template].call(nodeForm(typed));
		// n8n empties the variables (value null) and asks for the new template's fields.
		const other = await sms.methods.resourceMapping[TEMPLATE_VARIABLES_METHOD].call(nodeForm({ templateId: picked(String(templateWithoutVariablesId)), templateVariables: { value: null } }));
		expect(other.fields).toEqual([]);
		expect(other.emptyFieldsNotice).toMatch(/ Not in this template: \$\{code\}; its value is kept for a template that uses it\.$/);
		const back = await sms.methods.resourceMapping[TEMPLATE_VARIABLES_METHOD].call(nodeForm({ templateId: picked(String(templateId)), templateVariables: { value: null } }));
		expect(back.fields).toEqual([expect.objectContaining({ id: 'code', defaultValue: '={{ $json.code }}' })]);
	});

	it('another node starts with empty fields', async () => {
		const fields = await sms.methods.resourceMapping[TEMPLATE_VARIABLES_METHOD].call(formContext({ templateId: String(emulator.demo.templateId) }));
		expect(fields.fields).toEqual([expect.objectContaining({ id: 'code', defaultValue: null })]);
	});
});
