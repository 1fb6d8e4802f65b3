import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

/**
 * Issue 35: the Send bill of SMS 1.4 counts segments with the texts the catalogue holds for the
 * picked signature and template, when neither Options nor Read Template give them. The spending cap
 * never counts with them (they may be stale): it reads the gateway as before.
 */
const HOUR = 3_600_000;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
let emulator: Emulator;
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();
const credential = (extra: IDataObject = {}) => ({ appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxRetries: 0, ...extra });
const runSms = (parameters: INodeParameters, items: IDataObject[] = [{}], typeVersion?: number, extra: IDataObject = {}) =>
	runWorkflow({ steps: [{ name: 'SMS', type: sms, parameters, typeVersion }], items, credentials: { dataGatewayApi: credential(extra) } });
const hints = (result: Awaited<ReturnType<typeof runSms>>) => (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => hint.message);
const picked = (id: string | number) => ({ __rl: true, mode: 'list', value: String(id), cachedResultName: 'picked' });
const queries = (path: string) => emulator.ledger().byPath[path]?.calls ?? 0;

/** A template of 100 characters: with the demo signature, 2 segments. */
const LONG = `您的验证码是\${code}${'，'.repeat(88)}`;

async function longTemplate(content = LONG): Promise<string> {
	const created = await runSms({ resource: 'template', operation: 'create', name: '长模板', content, remark: 'login codes for example.com' });
	expect(created.error).toBeUndefined();
	const id = String(created.json()[0].id);
	emulator.finishPending('review', id);
	return id;
}

const sendPicked = (templateId: string, typeVersion: number, extra: IDataObject = {}) =>
	runSms(
		typeVersion >= 1.4
			? sendParameters(emulator, { signId: picked(emulator.demo.signatureId), templateId: picked(templateId) })
			: { ...sendParameters(emulator), templateId: typeVersion === 1 ? Number(templateId) : templateId, signId: typeVersion === 1 ? Number(emulator.demo.signatureId) : String(emulator.demo.signatureId) },
		[{ phone: '13900036001' }],
		typeVersion,
		extra,
	);

describe('the Send bill counts segments with the catalogue (SMS 1.4)', () => {
	it('a picked long template is billed as 2 segments, without a query', async () => {
		const id = await longTemplate();
		await runSms({ resource: 'signature', operation: 'get', id: emulator.demo.signatureId });
		const before = queries('/sms/query_template') + queries('/sms/query_sign');
		const result = await sendPicked(id, 1.4);
		expect(result.error).toBeUndefined();
		expect(result.json()[0]).toMatchObject({ segments: 2, costYuan: 0.07 });
		expect(hints(result)[0]).toBe('1 SMS sent, 2 message segments, 0.07 yuan when delivered');
		expect(queries('/sms/query_template') + queries('/sms/query_sign')).toBe(before);
	});

	it('without the signature in the catalogue the length stays unknown: "at least"', async () => {
		const id = await longTemplate();
		const result = await sendPicked(id, 1.4);
		expect(result.error).toBeUndefined();
		expect(hints(result)[0]).toBe('1 SMS sent, at least 1 message segment, 0.035 yuan when delivered');
	});

	it('a node saved with 1.3 bills as before, whatever the catalogue holds', async () => {
		const id = await longTemplate();
		await runSms({ resource: 'signature', operation: 'get', id: emulator.demo.signatureId });
		const result = await sendPicked(id, 1.3);
		expect(result.error).toBeUndefined();
		expect(result.json()[0].segments).toBeUndefined();
		expect(hints(result)[0]).toBe('1 SMS sent, at least 1 message segment, 0.035 yuan when delivered');
	});

	it('the spending cap reads the gateway, not a stale catalogue text', async () => {
		// Rejected and read: the catalogue holds its short text; then changed on the gateway's website.
		const id = await longTemplate('您的lottery号码是${code}');
		await runSms({ resource: 'template', operation: 'get', id });
		await runSms({ resource: 'signature', operation: 'get', id: emulator.demo.signatureId });
		const query = new URLSearchParams({ appCode: emulator.demo.appCode, id, name: '长模板', content: LONG, remark: 'r' });
		expect(((await (await fetch(`${emulator.url}/sms/modify_template?${query}`)).json()) as { code: number }).code).toBe(0);
		emulator.finishPending('review', id);

		const capped = await sendPicked(id, 1.4, { maxSpendPerExecution: 10 });
		expect(capped.error).toBeUndefined();
		expect(capped.json()[0]).toMatchObject({ segments: 2 });
		// Without a cap nothing is counted; the stale text shows in the output only.
		const uncapped = await sendPicked(id, 1.4);
		expect(uncapped.json()[0]).toMatchObject({ segments: 1 });
	});
});

describe('the texts a batch reads once (plan.ts, knownTexts.ts)', () => {
	it('items whose Template Content differs by expression are each counted with their own text', async () => {
		const short = `您的验证码是\${code}`;
		const result = await runSms(
			{ ...sendParameters(emulator), sendOptions: { signatureText: '【示例】', templateContent: '={{ $json.text }}' }, variablesInput: 'json', variablesJson: '={{ JSON.stringify({ code: "1234" }) }}' },
			[
				{ phone: '13900036011', text: short },
				{ phone: '13900036012', text: LONG },
				{ phone: '13900036013', text: short },
			],
		);
		expect(result.error).toBeUndefined();
		expect(result.json().map((item) => item.segments)).toEqual([1, 2, 1]);
	});
});
