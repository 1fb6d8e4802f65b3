/**
 * Issue 34 item 1: the credential's daily and monthly budgets, counted per account in the durable
 * store over every execution (money/ledger.ts). The gateway here is the emulator, whose ledger is
 * the bill; the store's clock (hostClock) sets the China day.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { StoreUnavailable, type DurableStore } from '../../nodes/shared/store/durableStore';
import { hostClock } from '../../nodes/shared/store/hostClock';
import * as openStore from '../../nodes/shared/store/openStore';
import { ledgerSpentYuan } from '../../nodes/shared/testing';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow, type WorkflowRunResult, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started), { deliveryDelayMs: 60_000 }, { smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });

const realClock = hostClock.now;
afterEach(() => {
	hostClock.now = realClock;
});
/** The store's time: an instant in China time. */
const setChinaTime = (year: number, month: number, day: number, hour: number) => (hostClock.now = () => Date.UTC(year, month - 1, day, hour - 8, 0));

const vehicle = new DataGatewayVehicle();
const continueOnFail: WorkflowStep['settings'] = {
	onError: 'continueRegularOutput',
};
const detail: INodeParameters = {
	resource: 'vehicle',
	operation: 'getDetail',
	carNumber: '={{ $json.plate }}',
	carType: '02',
};
let executions = 0;

async function lookups(plates: string[], credential: IDataObject, appCode = emulator.demo.memberAppCode, credentialId?: string): Promise<WorkflowRunResult> {
	return await runWorkflow({
		credentialId,
		steps: [
			{
				name: 'Detail',
				type: vehicle,
				parameters: detail,
				settings: continueOnFail,
			},
		],
		items: plates.map((plate) => ({ plate })),
		executionId: `budget-${process.pid}-${++executions}`,
		credentials: {
			dataGatewayApi: {
				appCodeSecret: appCode,
				baseUrl: emulator.url,
				...credential,
			},
		},
	});
}

const hintsOf = (result: WorkflowRunResult, node = 'Detail') => (result.run.data.resultData.runData[node]?.[0]?.hints ?? []).map((hint) => hint.message);
const billed = () => emulator.ledger().byPath['/car/query']?.billedCalls ?? 0;

describe('a daily budget over executions', () => {
	it('two executions at once on one credential with a budget of 2.00 and vehicle details at 1.20: one pays, the other is refused naming budget, spend and reset; the next day pays again', async () => {
		setChinaTime(2026, 3, 10, 23);
		const budget = { dailyBudgetYuan: 2 };
		const [one, two] = await Promise.all([lookups(['京A30001'], budget), lookups(['京A30002'], budget)]);
		const items = [...one.json(), ...two.json()];
		expect(billed()).toBe(1);
		const refused = items.filter((item) => item.error !== undefined);
		expect(refused).toHaveLength(1);
		expect(refused[0].error).toBe(
			"Get Vehicle Detail failed: not sent: Daily budget: 1.2 yuan more would bring the spend of this credential's account today (China time) to 2.40 yuan, above its daily budget of 2.00 yuan (1.20 yuan spent; it resets at 2026-03-11T00:00:00+08:00)",
		);
		expect(refused[0].errorDescription).toMatch(/Raise "Daily Budget \(Yuan\)" in the credential, or run it again once the budget resets\.$/);
		const paid = one.json()[0].error === undefined ? one : two;
		expect(hintsOf(paid).join('\n')).toContain('Budget: 1.20 of 2.00 yuan today (China time)');

		setChinaTime(2026, 3, 11, 0);
		const nextDay = await lookups(['京A30003'], budget);
		expect(nextDay.json()[0].error).toBeUndefined();
		expect(billed()).toBe(2);
	});

	it('one node with three lookups and room for one: the first is made, the others fail before any call; what was reserved and not spent is given back', async () => {
		setChinaTime(2026, 3, 12, 9);
		const result = await lookups(['京A31001', '京A31002', '京A31003'], {
			dailyBudgetYuan: 2,
			monthlyBudgetYuan: 100,
		});
		expect(result.json().map((item) => item.error === undefined)).toEqual([true, false, false]);
		expect(emulator.ledger().byPath['/car/query']?.calls).toBe(1);
		const spent = await ledgerSpentYuan('reader', emulator.url, emulator.demo.memberAppCode);
		expect(spent).toMatchObject({ day: 1.2 });
		expect(hintsOf(result).join('\n')).toContain('Budget: 1.20 of 2.00 yuan today; 1.20 of 100.00 yuan this month (China time)');
	});

	it('two credentials with different appCodes count apart', async () => {
		setChinaTime(2026, 3, 12, 9);
		await lookups(['京A32011'], { dailyBudgetYuan: 2 }, undefined, 'member');
		const other = await lookups(['京A32012'], { dailyBudgetYuan: 2 }, emulator.demo.appCode, 'plain');
		expect(other.json()[0].error).toBeUndefined();
		expect(billed()).toBe(2);
	});

	it('credentials with different Accounts count apart; another appCode of one Account counts with it (issue 41)', async () => {
		setChinaTime(2026, 3, 13, 9);
		await lookups(['京A32001'], { dailyBudgetYuan: 2, account: 'Fleet' }, undefined, 'fleet');
		const other = await lookups(['京A32002'], { dailyBudgetYuan: 2, account: 'Shop' }, emulator.demo.appCode, 'shop');
		expect(other.json()[0].error).toBeUndefined();
		expect(billed()).toBe(2);
		const rotated = await lookups(['京A32003'], { dailyBudgetYuan: 2, account: ' fleet ' }, emulator.demo.appCode, 'fleet-second');
		expect(rotated.json()[0].error).toMatch(/Daily budget: .*\(1\.20 yuan spent;/);
		expect(billed()).toBe(2);
	});
});

describe('a monthly budget', () => {
	it('refuses across days within the month, naming the 1st as its reset', async () => {
		setChinaTime(2026, 4, 29, 10);
		expect((await lookups(['京A33001'], { monthlyBudgetYuan: 2 })).json()[0].error).toBeUndefined();
		setChinaTime(2026, 4, 30, 10);
		const refused = (await lookups(['京A33002'], { monthlyBudgetYuan: 2 })).json()[0];
		expect(refused.error).toMatch(/not sent: Monthly budget: .* above its monthly budget of 2\.00 yuan \(1\.20 yuan spent; it resets at 2026-05-01T00:00:00\+08:00\)$/);
		setChinaTime(2026, 5, 1, 0);
		expect((await lookups(['京A33003'], { monthlyBudgetYuan: 2 })).json()[0].error).toBeUndefined();
	});
});

describe('what the budget counts', () => {
	it('a Free-Quota telephone identification costs nothing and counts nothing', async () => {
		setChinaTime(2026, 3, 14, 9);
		const result = await runWorkflow({
			steps: [
				{
					name: 'Phone',
					type: new DataGatewayTelephone(),
					parameters: { phoneNumber: '={{ $json.phone }}' },
				},
			],
			items: [{ phone: '13700001111' }, { phone: '13700002222' }],
			credentials: {
				dataGatewayApi: {
					appCodeSecret: emulator.demo.memberAppCode,
					baseUrl: emulator.url,
					dailyBudgetYuan: 0.01,
					telephonePlan: 'freeQuota',
				},
			},
		});
		expect(result.json().every((item) => item.error === undefined)).toBe(true);
		expect(await ledgerSpentYuan('reader', emulator.url, emulator.demo.memberAppCode)).toMatchObject({ day: 0, month: 0 });
	});

	it('an SMS counts at its estimated segments: a budget of 0.05 holds one SMS of one segment (0.035), the node with two is refused before sending', async () => {
		setChinaTime(2026, 3, 15, 9);
		const run = (phones: string[]) =>
			runWorkflow({
				steps: [
					{
						name: 'SMS',
						type: new DataGatewaySms(),
						parameters: sendParameters(emulator, {
							sendOptions: {
								signatureText: '测试',
								templateContent: '您的验证码是${code}',
							},
						}),
					},
				],
				items: phones.map((phone) => ({ phone })),
				credentials: {
					dataGatewayApi: {
						appCodeSecret: emulator.demo.appCode,
						baseUrl: emulator.url,
						dailyBudgetYuan: 0.05,
					},
				},
			});
		const first = await run(['13900007001']);
		expect(first.json()[0]).toMatchObject({ costYuan: 0.035, segments: 1 });
		const second = await run(['13900007002', '13900007003']);
		expect(second.error?.message).toMatch(
			/^Daily budget: this node's paid calls are estimated at 0\.07 yuan \(2 SMS, 2 message segments .* with 0\.035 yuan already spent today \(China time\) by this credential's account that is 0\.105 yuan, above its daily budget of 0\.05 yuan; it resets at 2026-03-16T00:00:00\+08:00$/,
		);
		expect(emulator.ledger().byPath['/sms/send']?.calls).toBe(1);
	});
});

describe('where the store fails, no paid call is made', () => {
	it('a lookup with a budget fails "not sent", naming the store, and the gateway gets no call', async () => {
		const open = openStore.openDurableStore;
		const spy = jest.spyOn(openStore, 'openDurableStore').mockImplementation(async (...args) => {
			const store = await open(...args);
			const broken: DurableStore = {
				kind: store.kind,
				label: store.label,
				now: async () => await store.now(),
				read: async (keys) => await store.read(keys),
				update: async () => await Promise.reject(new StoreUnavailable(store.label, `${store.label} is locked by another program`)),
			};
			return broken;
		});
		try {
			const result = await lookups(['京A34001'], { dailyBudgetYuan: 5 });
			expect(result.json()[0].error).toMatch(/^Not sent: the spending cap and budgets could not be counted: the SQLite file .* is locked by another program$/);
			expect(emulator.ledger().byPath['/car/query']?.calls ?? 0).toBe(0);
		} finally {
			spy.mockRestore();
		}
	});
});
