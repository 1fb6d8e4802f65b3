import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { deliveryRecordTiming } from '../../nodes/DataGatewaySms/actions/message/reference';
import * as sendsByTask from '../../nodes/shared/store/sendsByTask';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow, type WorkflowRunResult } from '../harness/workflow';
import { serveWebhook, type WebhookServer } from '../trigger/webhookServer';

/**
 * Delivery reports tied to their send (the Reference), and Check Pending Deliveries for the reports
 * that never reached the trigger. Sends and checks run as workflows through n8n-core; the trigger
 * is served over HTTP through n8n-core's WebhookContext; the emulator pushes (or withholds) reports.
 * Each test has its own gateway account, so no test sees another's sends.
 */
const execFileAsync = promisify(execFile);
const UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const CHINA_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+08:00$/;
const HOUR = 3_600_000;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0, withholdReports: false };
const ACCOUNTS = Array.from({ length: 24 }, (_, index) => ({ code: `delivery-account-${index}` }));
let emulator: Emulator;
useEmulator((started) => (emulator = started), { ...untilFinished, appCodes: ACCOUNTS }, untilFinished);

const sms = new DataGatewaySms();
let nextAccount = 0;
let appCode: string;
let trigger: WebhookServer | undefined;

beforeEach(() => {
	appCode = ACCOUNTS[nextAccount++].code;
});
afterEach(async () => {
	await trigger?.close();
	trigger = undefined;
});

async function serveTrigger(mode: 'webhook' | 'manual' = 'webhook') {
	trigger = await serveWebhook(new DataGatewaySmsTrigger(), {}, { mode });
	emulator.configure({ callbackUrl: trigger.url });
	return trigger;
}

function runSms(parameters: INodeParameters, items: IDataObject[] = [{}], executionId?: string, typeVersion?: number) {
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters, settings: { continueOnFail: true }, typeVersion }],
		items,
		executionId,
		// No retries: a fault the emulator injects reaches the node at once.
		credentials: { dataGatewayApi: { appCodeSecret: appCode, baseUrl: emulator.url, maxRetries: 0 } },
	});
}

/** From SMS 1.5 Reference is one of Send's options. */
const send = (items: IDataObject[], extra: INodeParameters = {}, executionId?: string) =>
	runSms(sendParameters(emulator, { ...extra, sendOptions: { reference: '={{ $json.orderId }}', ...(extra.sendOptions as IDataObject | undefined) } }), items, executionId);
const checkPending = (options: INodeParameters = { minAgeMinutes: 0 }, typeVersion?: number) =>
	runSms({ resource: 'message', operation: 'checkPendingDeliveries', sentWithinHours: 24, checkOptions: options }, [{}], undefined, typeVersion);

const hints = (result: WorkflowRunResult) => (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => hint.message);
const statusQueries = () => emulator.ledger().byPath['/sms/query_status']?.calls ?? 0;

/** Waits for the state, not for a time: the bound (10 s) only stops a broken run. */
async function until(condition: () => boolean) {
	for (let wait = 0; wait < 500 && !condition(); wait++) await new Promise((resolve) => setTimeout(resolve, 20));
	expect(condition()).toBe(true);
}

/** Ends the task's delivery; its report is pushed to the trigger unless `withhold`, and the test waits until it was. */
async function deliver(taskId: string, withhold = false) {
	emulator.configure({ withholdReports: withhold });
	const before = emulator.callbacks().length;
	emulator.finishPending('delivery', taskId);
	await until(() => emulator.callbacks().length > before);
	emulator.configure({ withholdReports: false });
}

/** A delivered report posted straight to the trigger, as the gateway would post it. */
async function postReport(taskId: string) {
	const response = await fetch(trigger!.url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-service-event': 'sms' },
		body: JSON.stringify({ action: 'report', sms: { id: taskId, phone: 13900000001, content: 'x', sendDate: '2026-11-22 10:00:00', receiveDate: '2026-11-22 10:00:05', status: 1, message: '' } }),
	});
	return { status: response.status, body: (await response.json()) as IDataObject };
}

/** Sends one SMS with a reference from a Node process of its own (test/sms/sendProbe.ts), with this test's store file. */
async function sendInAnotherProcess(phone: string, reference: string, nodeFlags: string[] = []) {
	const { stdout } = await execFileAsync(process.execPath, [...nodeFlags, '--import', 'tsx', join(__dirname, 'sendProbe.ts')], {
		cwd: join(__dirname, '..', '..'),
		env: {
			...process.env,
			PROBE_GATEWAY_URL: emulator.url,
			PROBE_APP_CODE: appCode,
			PROBE_SIGNATURE_ID: emulator.demo.signatureId,
			PROBE_TEMPLATE_ID: emulator.demo.templateId,
			PROBE_PHONE: phone,
			PROBE_REFERENCE: reference,
		},
	});
	return JSON.parse(stdout.trim().split('\n').pop() as string) as { items: IDataObject[]; hints: string[]; error?: string };
}

const reportsStarted = () => (trigger?.starts ?? []).map(([[item]]) => item.json);

describe('Reference', () => {
	it('a report posted to the trigger carries the reference, workflow and execution of its send made in another execution', async () => {
		await serveTrigger();
		const sent = await send([{ phone: '13900007001', orderId: 'A-1001' }], {}, 'send-execution-1');
		const [item] = sent.json();
		expect(item).toMatchObject({ taskId: expect.any(String), reference: 'A-1001' });

		await deliver(item.taskId as string);
		await until(() => reportsStarted().length === 1);
		expect(reportsStarted()[0]).toMatchObject({
			event: 'report',
			report: { id: item.taskId, statusLabel: 'delivered' },
			reference: 'A-1001',
			sendWorkflowId: 'test-workflow',
			sendExecutionId: 'send-execution-1',
			sentAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
		});
	});

	it('records the references of a batch 50 sends to a store update, not one update per send, and every report still carries its own', async () => {
		await serveTrigger();
		const record = jest.spyOn(sendsByTask, 'recordSends');
		// No group is sent early for its age here: the groups are the batch's own.
		const { waitMs } = deliveryRecordTiming;
		deliveryRecordTiming.waitMs = undefined;
		try {
			const items = Array.from({ length: 120 }, (_, index) => ({ phone: `1390000${String(8000 + index)}`, orderId: `B-${index}` }));
			const sent = (await send(items, {}, 'send-execution-batch')).json();
			expect(sent.filter((item) => typeof item.taskId === 'string')).toHaveLength(120);
			expect(record.mock.calls.map(([, , sends]) => sends.length)).toEqual([50, 50, 20]);
			for (const index of [0, 119]) await deliver(sent[index].taskId as string);
			await until(() => reportsStarted().length === 2);
			expect(reportsStarted().map((report) => report.reference).sort()).toEqual(['B-0', 'B-119']);
		} finally {
			record.mockRestore();
			deliveryRecordTiming.waitMs = waitMs;
		}
	});

	it('keeps a small JSON as text; the report of a send without a reference stays as it was', async () => {
		await serveTrigger();
		const sent = await send(
			[
				{ phone: '13900007002', orderId: '{"order":17,"line":2}' },
				{ phone: '13900007003', orderId: '' },
			],
			{},
			'send-execution-2',
		);
		const [withJson, without] = sent.json();
		expect(withJson.reference).toBe('{"order":17,"line":2}');
		expect(without).not.toHaveProperty('reference');

		await deliver(withJson.taskId as string);
		await deliver(without.taskId as string);
		await until(() => reportsStarted().length === 2);
		const byTask = new Map(reportsStarted().map((report) => [(report.report as IDataObject).id, report]));
		expect(JSON.parse(byTask.get(withJson.taskId)?.reference as string)).toEqual({ order: 17, line: 2 });
		// Saved workflows that set no Reference see the same report items as before.
		expect(Object.keys(byTask.get(without.taskId) ?? {}).sort()).toEqual(['action', 'event', 'receivedAt', 'report']);
	});

	it('a report of a task the store does not know starts the workflow without send fields', async () => {
		const { starts } = await serveTrigger();
		expect(await postReport('T-unknown-1')).toEqual({ status: 200, body: { received: true, started: true } });
		expect(starts).toHaveLength(1);
		expect(starts[0][0][0].json).not.toHaveProperty('reference');
	});

	it('a reference that is too long fails its item before any send, naming the field and the fix', async () => {
		const result = await send([
			{ phone: '13900007004', orderId: 'x'.repeat(1001) },
			{ phone: '13900007005', orderId: 'B-1' },
		]);
		const [tooLong, fine] = result.json();
		expect(tooLong.error).toBe('Item 1: Reference is 1001 characters long; at most 1000 are kept');
		expect(tooLong.errorDescription).toMatch(/short key.*No call was made/);
		expect(fine).toMatchObject({ reference: 'B-1', taskId: expect.any(String) });
		expect(emulator.ledger().byPath['/sms/send']?.calls).toBe(1);
	});

	it('a report posted to the trigger carries the reference of a send made in another process, through the SQLite file', async () => {
		await serveTrigger();
		const { items, hints: sendHints } = await sendInAnotherProcess('13900007007', 'elsewhere-1');
		expect(items).toEqual([expect.objectContaining({ taskId: expect.any(String), reference: 'elsewhere-1' })]);
		expect(sendHints.join('\n')).not.toMatch(/memory/);

		await deliver(items[0].taskId as string);
		await until(() => reportsStarted().length === 1);
		expect(reportsStarted()[0]).toMatchObject({ reference: 'elsewhere-1', sendExecutionId: 'probe-execution' });
	});

	it("says when the references stay in the sending process's memory (a Node without node:sqlite), where no trigger elsewhere sees them", async () => {
		await serveTrigger();
		const { items, hints: sendHints } = await sendInAnotherProcess('13900007008', 'in-memory-1', ['--no-experimental-sqlite']);
		expect(sendHints).toContainEqual(expect.stringMatching(/^References are kept in this n8n process's memory: an SMS Trigger in another n8n process \(queue mode's webhook processes\) or after a restart cannot see them/));
		await deliver(items[0].taskId as string);
		await until(() => reportsStarted().length === 1);
		expect(reportsStarted()[0]).not.toHaveProperty('reference');
	});
});

describe('two accounts given the same task ID', () => {
	it('no Reference or report mark crosses them: the trigger ties the report to neither, each Check Pending outputs its own', async () => {
		await serveTrigger();
		const [first, second] = [appCode, ACCOUNTS[nextAccount++].code];
		emulator.configure({ nextTaskIds: ['T-shared-1', 'T-shared-1'] });
		const [a] = (await send([{ phone: '13900009001', orderId: 'account-A' }])).json();
		appCode = second;
		const [b] = (await send([{ phone: '13900009002', orderId: 'account-B' }])).json();
		expect([a.taskId, b.taskId]).toEqual(['T-shared-1', 'T-shared-1']);

		// Both tasks end; each account's gateway pushes its report to this trigger.
		emulator.finishPending('delivery', 'T-shared-1');
		await until(() => reportsStarted().length === 2);
		for (const started of reportsStarted()) expect(started).not.toHaveProperty('reference');
		expect(trigger?.logs).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringMatching(/several accounts sent a message with the task ID/) }));

		// Neither report was marked for the other account: each account's check outputs its own send, once.
		const checkB = (await checkPending()).json();
		appCode = first;
		const checkA = (await checkPending()).json();
		expect(checkA).toEqual([expect.objectContaining({ reference: 'account-A', report: expect.objectContaining({ id: 'T-shared-1', phone: '13900009001' }) })]);
		expect(checkB).toEqual([expect.objectContaining({ reference: 'account-B', report: expect.objectContaining({ id: 'T-shared-1', phone: '13900009002' }) })]);
		expect((await checkPending()).json()).toEqual([]);
	});

	it("one account's Send and Check Delivery marks only its own send", async () => {
		const [first, second] = [appCode, ACCOUNTS[nextAccount++].code];
		emulator.configure({ nextTaskIds: ['T-shared-2', 'T-shared-2'] });
		await send([{ phone: '13900009003', orderId: 'pending-A' }]);
		emulator.configure({ withholdReports: true });
		appCode = second;
		emulator.configure({ deliveryDelayMs: 0 });
		const checked = await send([{ phone: '13900009004', orderId: 'checked-B' }], { operation: 'sendAndCheck', pollIntervalSeconds: 0.1, waitTimeoutSeconds: 10 });
		expect(checked.json()[0]).toMatchObject({ taskId: 'T-shared-2', outcome: 'delivered', reference: 'checked-B' });
		emulator.configure({ deliveryDelayMs: HOUR });
		expect((await checkPending()).json()).toEqual([]);

		appCode = first;
		emulator.finishPending('delivery', 'T-shared-2');
		expect((await checkPending()).json()).toEqual([expect.objectContaining({ reference: 'pending-A' })]);
	});
});

describe('Check Pending Deliveries', () => {
	it('finds a report withheld by the gateway, and does not list a report the trigger received', async () => {
		await serveTrigger();
		const [missed, received] = (
			await send([
				{ phone: '13900008001', orderId: 'missed' },
				{ phone: '13900008002', orderId: 'received' },
			])
		).json();
		await deliver(missed.taskId as string, true);
		await deliver(received.taskId as string);
		await until(() => reportsStarted().length === 1);
		expect(emulator.callbacks().map((callback) => callback.status)).toEqual(['withheld', 200]);

		emulator.resetLedger();
		const check = await checkPending();
		expect(check.error).toBeUndefined();
		expect(check.json()).toEqual([
			expect.objectContaining({ event: 'report', report: expect.objectContaining({ id: missed.taskId, statusLabel: 'delivered' }), reference: 'missed', caughtUp: true }),
		]);
		// Only the missed one was asked about: the received report is marked in the store.
		expect(statusQueries()).toBe(1);
		expect(hints(check)).toContain('1 free call, 0 yuan');
		expect(hints(check)).toContainEqual(expect.stringMatching(/^Check Pending Deliveries: 1 sent message without a final report: 1 final now \(output\), 0 still sending/));

		// Output once: the next run neither lists nor asks again,
		const again = await checkPending();
		expect(again.json()).toEqual([]);
		expect(statusQueries()).toBe(1);
		// and the report arriving late at the trigger starts nothing.
		const late = await postReport(missed.taskId as string);
		expect(late).toEqual({ status: 200, body: { received: true, started: false, reason: 'already output by Check Pending Deliveries' } });
		expect(reportsStarted()).toHaveLength(1);
	});

	it('leaves a message still sending for a later run, then outputs it once final', async () => {
		const [sent] = (await send([{ phone: '13900008003', orderId: 'slow' }])).json();
		const first = await checkPending();
		expect(first.json()).toEqual([]);
		expect(hints(first)).toContainEqual(expect.stringMatching(/1 sent message without a final report: 0 final now \(output\), 1 still sending/));

		await deliver(sent.taskId as string, true);
		const second = await checkPending();
		expect(second.json()).toEqual([expect.objectContaining({ reference: 'slow', report: expect.objectContaining({ id: sent.taskId }) })]);
	});

	it('skips messages younger than the minimum age, and asks about at most Max Messages per Run, oldest first', async () => {
		const sent = (await send([{ phone: '13900008004', orderId: 'one' }, { phone: '13900008005', orderId: 'two' }])).json();
		for (const item of sent) await deliver(item.taskId as string, true);
		expect((await checkPending({ minAgeMinutes: 5 })).json()).toEqual([]);
		expect(statusQueries()).toBe(0);

		const limited = await checkPending({ minAgeMinutes: 0, maxTasks: 1 });
		expect(limited.json().map((item) => item.reference)).toEqual(['one']);
		expect(hints(limited)).toContainEqual(expect.stringMatching(/1 more wait for the next run/));
		expect((await checkPending()).json().map((item) => item.reference)).toEqual(['two']);
	});

	it('takes turns: messages still sending do not keep a newer final one from being checked', async () => {
		const [slow1, slow2] = (await send([{ phone: '13900008010', orderId: 'slow-1' }, { phone: '13900008011', orderId: 'slow-2' }])).json();
		const [quick] = (await send([{ phone: '13900008012', orderId: 'quick' }])).json();
		await deliver(quick.taskId as string, true);
		emulator.resetLedger();
		const first = await checkPending({ minAgeMinutes: 0, maxTasks: 2 });
		expect(first.json()).toEqual([]);
		expect(hints(first)).toContainEqual(expect.stringMatching(/2 still sending; 1 more wait for the next run/));
		const second = await checkPending({ minAgeMinutes: 0, maxTasks: 2 });
		expect(second.json()).toEqual([expect.objectContaining({ reference: 'quick' })]);
		expect(statusQueries()).toBe(4);
		expect([slow1.taskId, slow2.taskId]).not.toContain(quick.taskId);
	});

	it('from version 1.4 writes its dates in China time with the zone, as the SMS Trigger 1.2 does; 1.3 keeps UTC', async () => {
		const [older, newer] = (await send([{ phone: '13900008013', orderId: 'v1.3' }, { phone: '13900008014', orderId: 'v1.4' }])).json();
		for (const item of [older, newer]) await deliver(item.taskId as string, true);
		const before = Date.now();
		const [atOld] = (await checkPending({ minAgeMinutes: 0, maxTasks: 1 }, 1.3)).json();
		const [atNew] = (await checkPending({ minAgeMinutes: 0, maxTasks: 1 }, 1.4)).json();
		expect(atOld).toMatchObject({ reference: 'v1.3', sentAt: expect.stringMatching(UTC), receivedAt: expect.stringMatching(UTC) });
		expect(atNew).toMatchObject({ reference: 'v1.4', sentAt: expect.stringMatching(CHINA_TIME), receivedAt: expect.stringMatching(CHINA_TIME) });
		// The same instants, written in another zone (a UTC wall clock marked +08:00 would read 8 hours early).
		expect(Date.parse(String(atNew.receivedAt))).toBeGreaterThanOrEqual(before - 1);
		expect(Date.parse(String(atNew.receivedAt))).toBeLessThanOrEqual(Date.now() + 1);
		expect(Math.abs(Date.parse(String(atNew.sentAt)) - Date.parse(String(atOld.sentAt)))).toBeLessThan(60_000);
		expect((atNew.report as IDataObject).sendDateIso).toMatch(/\+08:00$/);
	});

	it('does not list what Send and Check Delivery already saw final', async () => {
		emulator.configure({ deliveryDelayMs: 0, withholdReports: true });
		const result = await send([{ phone: '13900008006', orderId: 'checked' }], { operation: 'sendAndCheck', pollIntervalSeconds: 0.1, waitTimeoutSeconds: 10 });
		expect(result.json()[0]).toMatchObject({ outcome: 'delivered', reference: 'checked' });
		emulator.resetLedger();
		expect((await checkPending()).json()).toEqual([]);
		expect(statusQueries()).toBe(0);
	});

	it('a report caught on the Test URL is still listed: the active workflow never saw it', async () => {
		await serveTrigger('manual');
		const [sent] = (await send([{ phone: '13900008007', orderId: 'test-url' }])).json();
		await deliver(sent.taskId as string);
		await until(() => reportsStarted().length === 1);
		expect(reportsStarted()[0]).toMatchObject({ reference: 'test-url' });
		expect((await checkPending()).json()).toEqual([expect.objectContaining({ reference: 'test-url' })]);
	});

	it('a status query that fails leaves its message pending and says so; when every query fails, the item fails', async () => {
		const sent = (await send([{ phone: '13900008008', orderId: 'first' }, { phone: '13900008009', orderId: 'second' }])).json();
		for (const item of sent) await deliver(item.taskId as string, true);
		emulator.setFaults({ sequence: [{ kind: '500', path: '/sms/query_status', count: 1 }] });
		const partly = await checkPending();
		// Which of the two queries meets the fault depends on arrival order; one of them does.
		const checked = partly.json().map((item) => item.reference);
		expect(checked).toHaveLength(1);
		expect(hints(partly)).toContainEqual(expect.stringMatching(/; 1 could not be checked and stay pending \(.*500/));

		emulator.setFaults({ sequence: [{ kind: '500', path: '/sms/query_status', count: 1 }] });
		const failed = await checkPending();
		expect(failed.json()).toEqual([expect.objectContaining({ error: expect.stringMatching(/500/) })]);
		emulator.clearFaults();
		const rest = (await checkPending()).json().map((item) => item.reference);
		expect([...checked, ...rest].sort()).toEqual(['first', 'second']);
	});

	it('rejects a window beyond the 72 hours sends are kept, before any query', async () => {
		const result = await runSms({ resource: 'message', operation: 'checkPendingDeliveries', sentWithinHours: 100 });
		expect(result.json()[0].error).toBe('Item 1: Sent Within (Hours) "100" is not a number of hours from 1 to 72');
		expect(statusQueries()).toBe(0);
	});
});

describe('Reference as saved nodes have it (issue 42)', () => {
	it('a node saved with 1.4 reads Reference from its own field; from 1.5 it is an option of Send', async () => {
		const saved = await runSms(sendParameters(emulator, { reference: '={{ $json.orderId }}' }), [{ phone: '13900007451', orderId: 'saved-1.4' }], undefined, 1.4);
		expect(saved.json()[0]).toMatchObject({ reference: 'saved-1.4', taskId: expect.any(String) });
		const current = await send([{ phone: '13900007452', orderId: 'option-1.5' }]);
		expect(current.json()[0]).toMatchObject({ reference: 'option-1.5', taskId: expect.any(String) });
	});
});
