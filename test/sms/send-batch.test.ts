import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters as demoSend } from '../harness/sms';
import { runWorkflow, type WorkflowRunOptions, type WorkflowStep } from '../harness/workflow';

/** Reviews and deliveries end only when a test finishes them or sets a delay: no test races a timer. */
const HOUR = 3_600_000;
let emulator: Emulator;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();

function runSms(parameters: INodeParameters, items: IDataObject[], options: Partial<WorkflowRunOptions> & { settings?: WorkflowStep['settings']; credential?: IDataObject; typeVersion?: number } = {}) {
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters, settings: options.settings, typeVersion: options.typeVersion }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...options.credential } },
	});
}

const sendParameters = (extra: INodeParameters = {}) => demoSend(emulator, extra);

const acceptedSends = () => emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call' && call.code === 0).length;
const requestsTo = (path: string) => emulator.ledger().byPath[path]?.calls ?? 0;

/** The number a task went to, as the gateway's status query tells it. */
async function phoneOfTask(taskId: unknown): Promise<string> {
	const result = await runSms({ resource: 'message', operation: 'getStatus', taskId: String(taskId) }, [{}]);
	return String(result.json()[0].phone);
}

describe('Retry On Fail with an expression that differs on every try', () => {
	it('finds item 1\'s earlier send by node, run and item: one SMS per item, and the changed request is said', async () => {
		// An OTP drawn in the node: each try of the node evaluates it anew.
		const parameters = sendParameters({
			variables: { variable: [{ name: 'code', value: '={{ String(Math.floor(Math.random() * 900000) + 100000) }}' }] },
		});
		// One call at a time: item 1 is accepted, item 2 meets a 429 once (certainly not sent), n8n re-runs the node.
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/send', skip: 1, retryAfterSeconds: 0 }] });
		const phones = ['13900011001', '13900011002'];
		const result = await runSms(parameters, phones.map((phone) => ({ phone })), {
			settings: { retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
			// The node's default limit of 1 message per number and minute stays on: item 1's own send must not count against it.
			credential: { maxConcurrent: 1, maxRetries: 0 },
		});
		expect(result.error).toBeUndefined();
		const [first, second] = result.json();
		expect(first).toMatchObject({ sentEarlierInThisRun: true, taskId: expect.any(String), phone: phones[0], requestChangedOnRetry: true, changedOnRetry: ['variables'] });
		expect(second).toMatchObject({ sentEarlierInThisRun: false, taskId: expect.any(String), phone: phones[1] });
		expect(second.requestChangedOnRetry).toBeUndefined();
		// Item 1 once, item 2 refused once and then sent once.
		expect(requestsTo('/sms/send')).toBe(3);
		expect(acceptedSends()).toBe(2);
		expect(await phoneOfTask(first.taskId)).toBe(phones[0]);
		expect(await phoneOfTask(second.taskId)).toBe(phones[1]);
	});

	it('an unchanged request on the retry says nothing changed', async () => {
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/send', skip: 1, retryAfterSeconds: 0 }] });
		const result = await runSms(sendParameters(), [{ phone: '13900011003' }, { phone: '13900011004' }], {
			settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 },
			credential: { maxConcurrent: 1, maxRetries: 0 },
		});
		expect(result.error).toBeUndefined();
		expect(result.json()[0]).toMatchObject({ sentEarlierInThisRun: true });
		expect(result.json()[0].requestChangedOnRetry).toBeUndefined();
		expect(acceptedSends()).toBe(2);
	});
});

describe('a failure mid-batch', () => {
	it('names every item whose outcome is unknown, with its number, and they stay recorded', async () => {
		// Three sends at once: the first to arrive is accepted, the next two lose their connection (outcome unknown).
		emulator.setFaults({ sequence: [{ kind: 'reset', path: '/sms/send', skip: 1, count: 2 }] });
		const phones = ['13900012001', '13900012002', '13900012003'];
		const items = phones.map((phone) => ({ phone }));
		const failed = await runSms(sendParameters(), items, { credential: { maxConcurrent: 3, maxRetries: 0 } });
		expect(acceptedSends()).toBe(1);
		const message = failed.error?.message ?? '';
		const sent = [...message.matchAll(/item (\d) \(task [\w-]+\)/g)].map((match) => Number(match[1]));
		const unknown = [...(message.match(/\[outcome unknown, may have been sent; they stay recorded, so not sent again when the execution is retried: ([^\]]+)\]/)?.[1] ?? '').matchAll(/item (\d) \((\d+)\)/g)];
		expect(sent).toHaveLength(1);
		expect(unknown).toHaveLength(2);
		// Each unknown item is named with its own number; together with the sent one they are the whole batch.
		for (const [, item, phone] of unknown) expect(phone).toBe(phones[Number(item) - 1]);
		expect([...sent, ...unknown.map((match) => Number(match[1]))].sort()).toEqual([1, 2, 3]);

		// n8n's retry of the failed execution: nothing is sent again.
		const retried = await runSms(sendParameters(), items, { credential: { maxConcurrent: 3, maxRetries: 0 } });
		expect(retried.error).toBeUndefined();
		expect(retried.json().map((item) => item.sent === false)).toEqual([true, true, true]);
		expect(requestsTo('/sms/send')).toBe(3);
	});
});

describe('a send that certainly did not go out', () => {
	it('says "not sent", lets go of its records, and the same message is sent once the URL is fixed', async () => {
		// Nothing listens on port 1: the request never leaves.
		const refused = await runSms(sendParameters(), [{ phone: '13900016001' }], { credential: { baseUrl: 'http://127.0.0.1:1', maxRetries: 0 } });
		expect(refused.error?.message).toMatch(/not sent/);
		expect(refused.error?.message).not.toMatch(/may have been sent/);
		const fixed = await runSms(sendParameters(), [{ phone: '13900016001' }]);
		expect(fixed.json()[0]).toMatchObject({ sent: true, taskId: expect.any(String) });
		expect(acceptedSends()).toBe(1);
	});

	it('a gateway refusal names the number that was not sent to', async () => {
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/send', retryAfterSeconds: 0 }] });
		const refused = await runSms(sendParameters(), [{ phone: '13900016002' }], { credential: { maxRetries: 0 } });
		expect(refused.error?.message).toMatch(/429.*\(the SMS to 13900016002 was not sent\)$/);
	});
});

describe('spending cap with the message length not given', () => {
	/** A long template (150 characters with the signature: 3 segments), approved. */
	async function longTemplate(): Promise<number> {
		const content = `${'您的订单已发货'.repeat(20)}，验证码\${code}`;
		const created = (await runSms({ resource: 'template', operation: 'create', name: '长通知', content, remark: '发货通知' }, [{}])).json()[0];
		emulator.finishPending('review', String(created.id));
		return Number(created.id);
	}

	it('reads the template and signature (free queries, once per execution) and counts every segment', async () => {
		const templateId = await longTemplate();
		const items = [{ phone: '13900013001' }, { phone: '13900013002' }];
		// 2 SMS × 3 segments × 0.035 = 0.21 yuan; one segment each would have been 0.07, under the cap.
		const capped = await runSms(sendParameters({ templateId }), items, { credential: { maxSpendPerExecution: 0.1 } });
		expect(capped.error?.message).toBe(
			"Spending cap: this node's paid calls are estimated at 0.21 yuan (2 SMS, 6 message segments at 0.035 yuan; 2 lengths from the signature and template read from the gateway (free queries)); with 0 yuan already spent in this execution with this credential that is 0.21 yuan, above the cap of 0.1 yuan",
		);
		expect(requestsTo('/sms/send')).toBe(0);
		expect(requestsTo('/sms/query_template')).toBe(1);
		expect(requestsTo('/sms/query_sign')).toBe(1);

		const allowed = await runSms(sendParameters({ templateId }), items, { credential: { maxSpendPerExecution: 0.25 } });
		expect(allowed.error).toBeUndefined();
		expect(allowed.json().map((item) => [item.segments, item.costYuan])).toEqual([
			[3, 0.105],
			[3, 0.105],
		]);
		expect(acceptedSends()).toBe(2);
	});

	it('counts from Signature Text and Template Content when they are given, without reading', async () => {
		const templateId = await longTemplate();
		const content = `${'您的订单已发货'.repeat(20)}，验证码\${code}`;
		const result = await runSms(sendParameters({ templateId, sendOptions: { signatureText: '数据网关', templateContent: content } }), [{ phone: '13900013003' }], {
			credential: { maxSpendPerExecution: 0.1 },
		});
		expect(result.error?.message).toMatch(/estimated at 0\.105 yuan \(1 SMS, 3 message segments at 0\.035 yuan; 1 length from Signature Text and Template Content in Options\)/);
		expect(requestsTo('/sms/query_template')).toBe(0);
	});

	it('SMS 1.4, without a cap nothing is read: one segment per SMS is only an estimate', async () => {
		const templateId = await longTemplate();
		const result = await runSms(sendParameters({ templateId }), [{ phone: '13900013004' }], { typeVersion: 1.4 });
		expect(result.error).toBeUndefined();
		expect(result.json()[0].segments).toBeUndefined();
		expect(requestsTo('/sms/query_template')).toBe(0);
	});

	it('SMS 1.5, without a cap the template is read once for the forbidden-content check (a free query): its segments are known', async () => {
		const templateId = await longTemplate();
		const result = await runSms(sendParameters({ templateId }), [{ phone: '13900013005' }, { phone: '13900013006' }]);
		expect(result.error).toBeUndefined();
		expect(result.json().map((item) => item.segments)).toEqual([3, 3]);
		expect(requestsTo('/sms/query_template')).toBe(1);
	});
});

describe('Send and Check Delivery at batch speed', () => {
	// A gateway of its own: the 429s above slowed this process's limiter for the first one's credential.
	let first: Emulator;
	useEmulator(
		(started) => {
			first = emulator;
			emulator = started;
		},
		untilFinished,
		untilFinished,
	);
	afterAll(() => {
		emulator = first;
	});

	it('30 numbers: every send is made before the first status query, all 30 delivered, output in input order', async () => {
		emulator.configure({ deliveryDelayMs: 2000 });
		const phones = Array.from({ length: 30 }, (_, index) => `1390001${String(4000 + index)}`);
		const result = await runSms(sendParameters({ operation: 'sendAndCheck', pollIntervalSeconds: 1, waitTimeoutSeconds: 60 }), phones.map((phone) => ({ phone })));
		expect(result.error).toBeUndefined();
		const output = result.json() as Array<{ phone: string; outcome: string; task: IDataObject }>;
		expect(output.map((item) => item.phone)).toEqual(phones);
		expect(output.map((item) => item.outcome)).toEqual(phones.map(() => 'delivered'));
		expect(output.map((item) => String(item.task.phone))).toEqual(phones);
		// The emulator's ledger keeps the order in which requests arrived.
		const paths = emulator.ledger().calls.filter((call) => call.kind === 'call').map((call) => call.path);
		expect(paths.filter((path) => path === '/sms/send')).toHaveLength(30);
		expect(paths.lastIndexOf('/sms/send')).toBeLessThan(paths.indexOf('/sms/query_status'));
	});

	it('a status that cannot be read ends the node with the task ID, without waiting out the other items', async () => {
		// Deliveries never end here; without the stop the node would wait the full 10 minutes for the other two.
		emulator.setFaults({ sequence: [{ kind: '500', path: '/sms/query_status' }] });
		const result = await runSms(
			sendParameters({ operation: 'sendAndCheck', pollIntervalSeconds: 0.1, waitTimeoutSeconds: 600 }),
			[{ phone: '13900015003' }, { phone: '13900015004' }, { phone: '13900015005' }],
			{ credential: { maxRetries: 0 } },
		);
		expect(result.error?.message).toMatch(/the SMS was sent as task [\w-]+, but its status could not be read/);
		expect(result.error?.message).toMatch(/already sent, and not sent again when the execution is retried: item 1 \(task [\w-]+\), item 2 \(task [\w-]+\), item 3 \(task [\w-]+\)/);
		expect(acceptedSends()).toBe(3);
	});

	it('under Continue On Fail a refused item becomes an error item in its place; the others are followed', async () => {
		emulator.configure({ deliveryDelayMs: 0 });
		const result = await runSms(
			sendParameters({ operation: 'sendAndCheck', pollIntervalSeconds: 0.1, waitTimeoutSeconds: 10 }),
			[{ phone: '13900015001' }, { phone: '12345' }, { phone: '13900015002' }],
			{ settings: { continueOnFail: true } },
		);
		const [first, second, third] = result.json();
		expect(first).toMatchObject({ outcome: 'delivered', phone: '13900015001' });
		expect(second.error).toMatch(/Item 2: Phone Number/);
		expect(third).toMatchObject({ outcome: 'delivered', phone: '13900015002' });
		expect(result.items().map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});
});

describe('a send the gateway accepted (code 0) whose answer has no usable task ID', () => {
	it('is output as sent with a warning, not as "may have been sent", and Retry On Fail does not send it again', async () => {
		// Item 1's answer arrives misshapen; item 2 meets a 429 once, so n8n re-runs the node.
		emulator.setFaults({
			sequence: [
				{ kind: 'misshapen', path: '/sms/send' },
				{ kind: '429', path: '/sms/send', retryAfterSeconds: 0 },
			],
		});
		const phones = ['13900012001', '13900012002'];
		const result = await runSms(sendParameters(), phones.map((phone) => ({ phone })), {
			settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 },
			credential: { maxConcurrent: 1, maxRetries: 0 },
		});
		expect(result.error).toBeUndefined();
		const [first, second] = result.json();
		expect(first).toMatchObject({ taskId: null, phone: phones[0], sent: true, warning: expect.stringContaining('the call took effect') });
		expect(second).toMatchObject({ taskId: expect.any(String), phone: phones[1] });
		// Item 1 once (accepted, misshapen answer), item 2 refused once and then sent once.
		expect(acceptedSends()).toBe(2);
		expect(requestsTo('/sms/send')).toBe(3);
	});

	it('counts as sent in the run\'s bill', async () => {
		emulator.setFaults({ sequence: [{ kind: 'misshapen', path: '/sms/send' }] });
		const result = await runSms(sendParameters(), [{ phone: '13900012003' }]);
		expect(result.json()[0]).toMatchObject({ taskId: null, warning: expect.any(String) });
		const hints = (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => hint.message);
		expect(hints[0]).toMatch(/^1 SMS sent/);
	});
});
