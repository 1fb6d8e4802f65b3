/**
 * Usage → Get over a day of real runs through n8n-core's engine, against the emulator: sends,
 * repeats, an opted-out number, a lookup paid then reused, one refused by the daily budget, and
 * delivery reports (pushed to an SMS Trigger, and found by Check Pending Deliveries). Then the day
 * and month boundaries at China midnight, and the rule that a run costs at most one usage update.
 */
import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { PRICES_YUAN } from '../../nodes/shared/gateway/catalog';
import { hostClock } from '../../nodes/shared/store/hostClock';
import * as openStore from '../../nodes/shared/store/openStore';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';
import { serveWebhook, type WebhookServer } from '../trigger/webhookServer';

const HOUR = 3_600_000;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0, withholdReports: false };
const ACCOUNTS = Array.from({ length: 8 }, (_, index) => ({ code: `usage-account-${index}` }));
let emulator: Emulator;
useEmulator((started) => (emulator = started), { ...untilFinished, appCodes: ACCOUNTS }, untilFinished);

const sms = new DataGatewaySms();
const vehicle = new DataGatewayVehicle();
let nextAccount = 0;
let appCode: string;
let trigger: WebhookServer | undefined;
const realClock = hostClock.now;

beforeEach(() => {
	appCode = ACCOUNTS[nextAccount++].code;
});
afterEach(async () => {
	hostClock.now = realClock;
	jest.restoreAllMocks();
	await trigger?.close();
	trigger = undefined;
});

/** The store's clock (the SQLite file's: this host's) at a China time. */
const chinaTime = (iso: string) => {
	const at = Date.parse(`${iso}+08:00`);
	hostClock.now = () => at;
};

function run(type: INodeType, parameters: INodeParameters, items: IDataObject[] = [{}], credential: IDataObject = {}, credentialId?: string) {
	return runWorkflow({
		steps: [{ name: 'Node', type, parameters, settings: { continueOnFail: true } }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: appCode, baseUrl: emulator.url, maxRetries: 0, ...credential } },
		credentialId,
	});
}

async function usage(pastDay = '', credential: IDataObject = {}) {
	const result = await run(sms, { resource: 'usage', operation: 'get', pastDay }, [{}], credential);
	expect(result.error).toBeUndefined();
	return result.json()[0];
}

/** Waits for the state, not for a time: the bound (10 s) only stops a broken run. */
async function until(condition: () => boolean) {
	for (let wait = 0; wait < 500 && !condition(); wait++) await new Promise((resolve) => setTimeout(resolve, 20));
	expect(condition()).toBe(true);
}

/** Ends a task's delivery; its report reaches the trigger unless withheld. */
async function deliver(taskId: string, { fail = false, withhold = false } = {}) {
	emulator.configure({ deliveryFailureShare: fail ? 1 : 0, withholdReports: withhold });
	const before = emulator.callbacks().length;
	emulator.finishPending('delivery', taskId);
	await until(() => emulator.callbacks().length > before);
	emulator.configure({ deliveryFailureShare: 0, withholdReports: false });
}

const zeroCounts = {
	spentYuan: 0,
	paidCalls: {},
	freeCalls: {},
	refused: { cap: 0, dailyBudget: 0, monthlyBudget: 0, telephoneQuota: 0 },
	reused: { answers: 0, savedYuan: 0 },
	sms: { sent: 0, segments: 0, skipped: { repeat: 0, optedOut: 0, outsideWindow: 0 }, delivered: 0, failed: 0, pending: 0 },
};

describe('Usage → Get over a day', () => {
	it('counts sends, repeats, an opt-out, a refused budget, reuse and delivery reports, to the fen of the gateway ledger', async () => {
		chinaTime('2026-11-27T10:00:00');
		const budget = { dailyBudgetYuan: 2 };
		trigger = await serveWebhook(new DataGatewaySmsTrigger(), {}, { mode: 'webhook' });
		emulator.configure({ callbackUrl: trigger.url });
		expect(await usage()).toMatchObject({ today: { date: '2026-11-27', ...zeroCounts }, thisMonth: { month: '2026-11', ...zeroCounts }, optOutListSize: 0 });

		await run(sms, { resource: 'optOut', operation: 'add', phone: '={{ $json.phone }}' }, [{ phone: '13900004000' }, { phone: '13900004001' }]);
		await run(sms, { resource: 'optOut', operation: 'remove', phone: '={{ $json.phone }}' }, [{ phone: '13900004001' }]);
		const phones = ['13900004101', '13900004102', '13900004103', '13900004000'].map((phone) => ({ phone }));
		const sent = await run(sms, sendParameters(emulator), phones, budget);
		const taskIds = sent.json().slice(0, 3).map((item) => item.taskId as string);
		expect(taskIds.every((id) => typeof id === 'string')).toBe(true);
		const segments = sent.json().slice(0, 3).reduce((sum, item) => sum + (item.segments as number), 0);
		// The same messages again, in another execution: skipped as repeats.
		const again = await run(sms, sendParameters(emulator), phones.slice(0, 3), budget);
		expect(again.json().map((item) => item.sent)).toEqual([false, false, false]);

		const detail = { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '52', options: { reuseAnswersHours: 24 } };
		await run(vehicle, detail, [{ plate: '粤BD40001' }], budget);
		const reused = await run(vehicle, detail, [{ plate: '粤BD40001' }], budget);
		expect(reused.json()[0]).toMatchObject({ reused: true, costYuan: 0 });
		const refused = await run(vehicle, detail, [{ plate: '粤BD40002' }], budget);
		expect(refused.json()[0].error).toMatch(/not sent: Daily budget: 1.2 yuan more/);

		// Two reports reach the trigger (one delivered, one failed); the third is found by Check Pending Deliveries.
		await deliver(taskIds[0]);
		await deliver(taskIds[1], { fail: true });
		await until(() => (trigger?.starts.length ?? 0) >= 2);
		await deliver(taskIds[2], { withhold: true });
		const checked = await run(sms, { resource: 'message', operation: 'checkPendingDeliveries', sentWithinHours: 24, checkOptions: { minAgeMinutes: 0 } });
		expect(checked.json()).toHaveLength(1);

		const ledger = emulator.ledger();
		const lookupYuan = ledger.byPath['/car/query']?.costYuan ?? 0;
		expect(lookupYuan).toBe(PRICES_YUAN.vehicleDetail);
		const smsYuan = Math.round(segments * PRICES_YUAN.smsSegment * 10_000) / 10_000;
		const today = {
			// SMS are counted when sent, at their price when delivered: the gateway bills the failed one nothing.
			spentYuan: Math.round((lookupYuan + smsYuan) * 10_000) / 10_000,
			paidCalls: { 'Get Vehicle Detail': 1, 'Send SMS': 3 },
			freeCalls: { 'Get SMS Status': 1 },
			refused: { cap: 0, dailyBudget: 1, monthlyBudget: 0, telephoneQuota: 0 },
			reused: { answers: 1, savedYuan: PRICES_YUAN.vehicleDetail },
			sms: { sent: 3, segments, skipped: { repeat: 3, optedOut: 1, outsideWindow: 0 }, delivered: 2, failed: 1, pending: 0 },
		};
		const report = await usage('', budget);
		expect(report).toMatchObject({ today: { date: '2026-11-27', ...today }, thisMonth: { month: '2026-11', ...today }, optOutListSize: 1 });
		// The bill the gateway sent matches what was delivered: the failed SMS' segment is the only difference.
		const deliveredSegments = ledger.byPath['/sms/send']?.deliveredSegments ?? 0;
		expect(Math.round((lookupYuan + deliveredSegments * PRICES_YUAN.smsSegment) * 10_000) / 10_000).toBe(
			Math.round((today.spentYuan - (sent.json()[1].costYuan as number)) * 10_000) / 10_000,
		);
		expect(report.budgets).toEqual({
			daily: { budgetYuan: 2, countedYuan: today.spentYuan, leftYuan: Math.round((2 - today.spentYuan) * 10_000) / 10_000, resetsAt: '2026-11-28T00:00:00+08:00' },
			monthly: null,
			capPerExecutionYuan: null,
		});
		expect(report.telephone).toEqual({ plan: 'notSet', callsToday: 0, freeCallsLeft: 100, resetsAt: '2026-11-28T00:00:00+08:00' });
		// No personal data in the counts: no number or plate anywhere in the answer.
		expect(JSON.stringify(report)).not.toMatch(/1390000|粤BD/);
	});

	it('puts each run on its China day and month: 23:59:59 and 00:00:00 are two days and two months; a report counts on its send day', async () => {
		chinaTime('2026-11-30T23:59:59');
		const first = await run(sms, sendParameters(emulator), [{ phone: '13900004201' }]);
		chinaTime('2026-12-01T00:00:00');
		await run(sms, sendParameters(emulator), [{ phone: '13900004202' }, { phone: '13900004203' }]);
		emulator.configure({ withholdReports: true });
		emulator.finishPending('delivery', first.json()[0].taskId as string);
		await run(sms, { resource: 'message', operation: 'checkPendingDeliveries', sentWithinHours: 24, checkOptions: { minAgeMinutes: 0 } });

		const report = await usage('2026-11-30');
		expect(report.today).toMatchObject({ date: '2026-12-01', sms: { sent: 2, delivered: 0, pending: 2 } });
		expect(report.thisMonth).toMatchObject({ month: '2026-12', sms: { sent: 2, delivered: 0, pending: 2 } });
		expect(report.pastDay).toMatchObject({ date: '2026-11-30', sms: { sent: 1, delivered: 1, pending: 0 } });
	});

	it('refuses a past day that is not kept or not past, naming the field, before reading the store', async () => {
		chinaTime('2026-12-01T09:00:00');
		const result = await run(sms, { resource: 'usage', operation: 'get', pastDay: '={{ $json.day }}' }, [{ day: '2026-08-30' }, { day: '2026-12-02' }, { day: '2026-09-01' }, { day: '30.11.2026' }]);
		const answers = result.json();
		expect(answers[0].error).toBe('Item 1: Past Day (China Time) 2026-08-30 is no longer kept: days are kept 93 days (the oldest is 2026-08-31)');
		expect(answers[1].error).toBe('Item 2: Past Day (China Time) 2026-12-02 is after today (2026-12-01, China time)');
		expect(answers[2]).toMatchObject({ pastDay: { date: '2026-09-01' } });
		expect(answers[3].error).toMatch(/^Item 4: Past Day \(China Time\) "30.11.2026" is not a date like 2026-11-24/);
	});
});

describe('an account whose credential changes', () => {
	it('keeps the day when the App Code is rotated: the counts before, and a report of a message sent before, still count', async () => {
		chinaTime('2026-11-27T14:00:00');
		const credentialId = 'rotated-credential';
		const withCode = (code: string) => ({ appCodeSecret: code });
		const [before, after] = [appCode, ACCOUNTS[ACCOUNTS.length - 1].code];
		trigger = await serveWebhook(new DataGatewaySmsTrigger(), {}, { mode: 'webhook' });
		emulator.configure({ callbackUrl: trigger.url });
		const sent = await run(sms, sendParameters(emulator), [{ phone: '13900004501' }, { phone: '13900004502' }], withCode(before), credentialId);
		const detail = { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD45001', carType: '52' };
		await run(vehicle, detail, [{}], withCode(before), credentialId);

		// The same credential with its App Code rotated: one more send, then a report of a send made before.
		await run(sms, sendParameters(emulator), [{ phone: '13900004503' }], withCode(after), credentialId);
		await deliver(sent.json()[0].taskId as string);
		await until(() => (trigger?.starts.length ?? 0) >= 1);

		const report = await run(sms, { resource: 'usage', operation: 'get' }, [{}], withCode(after), credentialId);
		expect(report.json()[0].today).toMatchObject({ paidCalls: { 'Get Vehicle Detail': 1, 'Send SMS': 3 }, sms: { sent: 3, delivered: 1, pending: 2 } });
		expect(report.json()[0].thisMonth).toMatchObject({ paidCalls: { 'Get Vehicle Detail': 1, 'Send SMS': 3 }, sms: { sent: 3, delivered: 1 } });
	});
});

describe('what counting costs', () => {
	it('a run counts in one store update (its day and month), whatever its items; a free run that counts nothing writes nothing', async () => {
		chinaTime('2026-11-27T11:00:00');
		const usageUpdates: string[][] = [];
		const open = openStore.openDurableStore;
		jest.spyOn(openStore, 'openDurableStore').mockImplementation(async (...args) => {
			const store = await open(...args);
			return Object.assign(Object.create(store) as typeof store, {
				// An update that writes usage counts; one that wrote nothing (its guess of the day was stale) is a re-read.
				update: async (...[keys, decide, guess]: Parameters<typeof store.update>) =>
					await store.update(
						keys,
						(values, now) => {
							const decision = decide(values, now);
							if (decision.writes.some((write) => write.key.startsWith('usage|'))) usageUpdates.push([...keys]);
							return decision;
						},
						guess,
					),
			});
		});
		const items = Array.from({ length: 20 }, (_, index) => ({ phone: `139000043${String(index).padStart(2, '0')}` }));
		await run(sms, sendParameters(emulator), items);
		expect(usageUpdates).toHaveLength(1);
		await run(sms, { resource: 'optOut', operation: 'check', phone: '={{ $json.phone }}' }, items);
		await run(sms, { resource: 'usage', operation: 'get' });
		expect(usageUpdates).toHaveLength(1);
	});
});
