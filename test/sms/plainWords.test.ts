import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

/**
 * Issue 35: from SMS 1.4 a send's item says `sent` (and `notSentBecause`) and `sentEarlierInThisRun`
 * instead of `skippedAsRepeat` and `deduplicated`; a repeated create says `created: false`. Nodes
 * saved with 1.3 and earlier keep the old keys.
 */
const HOUR = 3_600_000;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: 50, deliveryFailureShare: 0 };
let emulator: Emulator;
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();
const runSms = (parameters: INodeParameters, items: IDataObject[], typeVersion: number) =>
	runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters, typeVersion }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxRetries: 0 } },
	});
const hints = (result: Awaited<ReturnType<typeof runSms>>) => (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => hint.message);
const send = (typeVersion: number, extra: INodeParameters = {}) => {
	const parameters = sendParameters(emulator, extra);
	return typeVersion === 1 ? parameters : { ...parameters, signId: String(parameters.signId), templateId: String(parameters.templateId) };
};

describe('a send and its repeat, in words a user reads', () => {
	it('1.4: sent true, then sent false with why; the bill and warning count the repeat', async () => {
		const items = [{ phone: '13900037001' }];
		const first = await runSms(send(1.4), items, 1.4);
		expect(first.json()[0]).toMatchObject({ taskId: expect.any(String), sent: true, sentEarlierInThisRun: false });
		expect(first.json()[0]).not.toHaveProperty('notSentBecause');
		const repeated = await runSms(send(1.4), items, 1.4);
		const [item] = repeated.json();
		expect(item).toMatchObject({ taskId: null, sent: false, sentEarlierInThisRun: false, costYuan: 0 });
		expect(item.notSentBecause).toBe('an earlier execution sent the same message (number, signature, template, variables) within the Repeat Window of 10 minutes');
		expect(item).not.toHaveProperty('skippedAsRepeat');
		expect(item).not.toHaveProperty('deduplicated');
		expect(hints(repeated)[0]).toBe('No SMS sent; 1 repeat of an earlier execution skipped');
		expect(hints(repeated)[1]).toMatch(/^1 SMS not sent: an earlier execution sent the same message/);
	});

	it.each([1, 1.3])('%s keeps skippedAsRepeat and deduplicated', async (typeVersion) => {
		const items = [{ phone: `1390003700${typeVersion === 1 ? 2 : 3}` }];
		const first = await runSms(send(typeVersion), items, typeVersion);
		expect(first.json()[0]).toMatchObject({ taskId: expect.any(String), deduplicated: false, skippedAsRepeat: false });
		expect(first.json()[0]).not.toHaveProperty('sent');
		const repeated = await runSms(send(typeVersion), items, typeVersion);
		expect(repeated.json()[0]).toMatchObject({ taskId: null, deduplicated: false, skippedAsRepeat: true });
		expect(repeated.json()[0]).not.toHaveProperty('notSentBecause');
		expect(hints(repeated)[0]).toBe('No SMS sent; 1 repeat of an earlier execution skipped');
	});

	it.each([
		[1.4, 'not sent (repeat)'],
		[1.3, 'skippedAsRepeat'],
	])('Send and Check Delivery %s: a repeat\'s outcome is "%s"', async (typeVersion, outcome) => {
		const items = [{ phone: `1390003701${typeVersion === 1.4 ? 4 : 3}` }];
		const check = send(typeVersion, { operation: 'sendAndCheck', pollIntervalSeconds: 0.1, waitTimeoutSeconds: 10 });
		expect((await runSms(check, items, typeVersion)).json()[0]).toMatchObject({ outcome: 'delivered' });
		expect((await runSms(check, items, typeVersion)).json()[0]).toMatchObject({ outcome });
	});
});

describe('a repeated create', () => {
	it.each([
		[1.4, { created: false, notCreatedBecause: 'an earlier execution created the same signature within a day: a second would be a duplicate' }],
		[1.3, { skippedAsRepeat: true }],
	])('%s says %j', async (typeVersion, says) => {
		const create = { resource: 'signature', operation: 'create', name: `网关${String(typeVersion).replace('.', '')}`, remark: '验证码' };
		expect((await runSms(create, [{}], typeVersion)).json()[0]).not.toHaveProperty('created');
		const retried = await runSms(create, [{}], typeVersion);
		expect(retried.json()[0]).toMatchObject({ ...says, name: create.name });
	});
});
