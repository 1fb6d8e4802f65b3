import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { StoreUnavailable, type DurableStore } from '../../nodes/shared/store/durableStore';
import * as openStore from '../../nodes/shared/store/openStore';
import { hostClock as recordsClock } from '../../nodes/shared/store/hostClock';
import { isDeliveryKey } from '../../nodes/shared/store/sendsByTask';
import { forgetAllExecutionMemory } from '../../nodes/shared/testing';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { codeVariable, sendParameters as demoSend } from '../harness/sms';
import { runWorkflow, type WorkflowRunOptions, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
useEmulator(
	(started) => (emulator = started),
	{ reviewDelayMs: 50, deliveryDelayMs: 100, deliveryFailureShare: 0 },
	// The gateway's own per-number limits are not under test here; the node's are.
	{ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } },
);
const realClock = recordsClock.now;
afterEach(() => {
	recordsClock.now = realClock;
});

const sms = new DataGatewaySms();
const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();

/** Sets the time the nodes write their records with, so that windows are deterministic. */
function setClock(iso: string) {
	const at = Date.parse(iso);
	recordsClock.now = () => at;
}
const freezeClock = (iso = '2026-11-22T02:30:30.000Z') => setClock(iso);

const credential = (extra: IDataObject = {}) => ({ dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...extra } });

function runSms(parameters: INodeParameters, items: IDataObject[], options: Partial<WorkflowRunOptions> & { settings?: WorkflowStep['settings']; credential?: IDataObject } = {}) {
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters, settings: options.settings }],
		items,
		credentials: credential(options.credential),
		loopBatchSize: options.loopBatchSize,
		executionId: options.executionId,
	});
}

function sendParameters(extra: INodeParameters = {}, sendOptions: IDataObject = {}): INodeParameters {
	return demoSend(emulator, {
		variables: codeVariable('={{ $json.code ?? "1234" }}'),
		sendOptions: { perMinute: 10, perHour: 10, ...sendOptions },
		...extra,
	});
}

/** Runs `work` with the store the nodes open (SQLite on Node 24, else memory) updating through `update`. */
async function withStore<T>(update: (store: DurableStore) => DurableStore['update'], work: () => Promise<T>): Promise<T> {
	const open = openStore.openDurableStore;
	const spy = jest.spyOn(openStore, 'openDurableStore').mockImplementation(async (...args) => {
		const store = await open(...args);
		return { kind: store.kind, label: store.label, now: async () => await store.now(), read: async (keys) => await store.read(keys), update: update(store) };
	});
	try {
		return await work();
	} finally {
		spy.mockRestore();
	}
}

/** Messages the gateway accepted: the ledger is the judge. */
const acceptedSends = () => emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call' && call.code === 0).length;
const sendRequests = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;

describe('runs: each run of a node is its own work', () => {
	it('a loop of 2 runs sends 2 messages, also when both runs carry the identical item', async () => {
		const result = await runSms(sendParameters(), [{ phone: '13900006001' }, { phone: '13900006001' }], { loopBatchSize: 1 });
		expect(result.error).toBeUndefined();
		const runs = result.runs('SMS');
		expect(runs).toHaveLength(2);
		const [first, second] = runs.map((items) => items[0]);
		expect(first).toMatchObject({ taskId: expect.any(String), sentEarlierInThisRun: false, sent: true });
		expect(second).toMatchObject({ taskId: expect.any(String), sentEarlierInThisRun: false, sent: true });
		expect(second.taskId).not.toBe(first.taskId);
		expect(acceptedSends()).toBe(2);
	});

	it('Retry On Fail within a run does not send an already sent item again', async () => {
		// One call at a time: item 1 is accepted, item 2 meets a 429 (certainly not sent), n8n re-runs the node.
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/send', skip: 1, retryAfterSeconds: 0 }] });
		const result = await runSms(sendParameters(), [{ phone: '13900006002' }, { phone: '13900006003' }], {
			settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 },
			credential: { maxConcurrent: 1, maxRetries: 0 },
		});
		expect(result.error).toBeUndefined();
		const [first, second] = result.json();
		expect(first).toMatchObject({ sentEarlierInThisRun: true, taskId: expect.any(String) });
		expect(second).toMatchObject({ sentEarlierInThisRun: false, taskId: expect.any(String) });
		expect(sendRequests()).toBe(3); // item 1 once, item 2 refused once and then sent
		expect(acceptedSends()).toBe(2);
	});
});

describe('a failure mid-batch', () => {
	it('names the items already sent with their task IDs, and a retried execution sends only the rest', async () => {
		freezeClock();
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/send', skip: 2, retryAfterSeconds: 0 }] });
		const items = [{ phone: '13900007001' }, { phone: '13900007002' }, { phone: '13900007003' }];
		const failed = await runSms(sendParameters(), items, { credential: { maxConcurrent: 1, maxRetries: 0 } });
		expect(acceptedSends()).toBe(2);
		expect(failed.error?.message).toMatch(/^Item 3: /);
		expect(failed.error?.message).toMatch(/already sent, and not sent again when the execution is retried: item 1 \(task [\w-]+\), item 2 \(task [\w-]+\)/);

		// n8n's retry of a failed execution: a new execution ID, the same input.
		const retried = await runSms(sendParameters(), items, { credential: { maxConcurrent: 1, maxRetries: 0 } });
		expect(retried.error).toBeUndefined();
		expect(retried.json().map((item) => item.sent === false)).toEqual([true, true, false]);
		expect(retried.json()[2].taskId).toEqual(expect.any(String));
		expect(acceptedSends()).toBe(3);
	});
});

describe('across executions (the durable store)', () => {
	it('per-number limits count this node\'s sends across executions: a clear local refusal and no call', async () => {
		freezeClock();
		const parameters = sendParameters({}, { perMinute: 1 });
		expect((await runSms(parameters, [{ phone: '13900008001', code: '1111' }])).error).toBeUndefined();
		const before = sendRequests();
		// Another execution, another code: not a repeat, but a second message in the same minute.
		const second = await runSms(parameters, [{ phone: '13900008001', code: '2222' }]);
		expect(second.error?.message).toBe('Item 1: Phone Number not sent: this would be message 2 to 13900008001 in this calendar minute; this node allows 1');
		expect(sendRequests()).toBe(before);
		// The next calendar minute allows one again.
		setClock('2026-11-22T02:31:00.000Z');
		expect((await runSms(parameters, [{ phone: '13900008001', code: '3333' }])).error).toBeUndefined();
		expect(acceptedSends()).toBe(2);
	});

	it('the day limit counts a China-time calendar day across executions', async () => {
		freezeClock('2026-11-22T15:59:00.000Z'); // 23:59 in China
		const parameters = sendParameters({}, { perMinute: 5, perHour: 5, perDay: 1 });
		expect((await runSms(parameters, [{ phone: '13900008002', code: '1' }])).error).toBeUndefined();
		expect((await runSms(parameters, [{ phone: '13900008002', code: '2' }])).error?.message).toMatch(/in this calendar day \(China time\); this node allows 1/);
		setClock('2026-11-22T16:00:00.000Z'); // midnight in China
		expect((await runSms(parameters, [{ phone: '13900008002', code: '3' }])).error).toBeUndefined();
		expect(acceptedSends()).toBe(2);
	});

	it('the repeat window skips the same message from another execution, also after a restart; 0 turns it off', async () => {
		freezeClock();
		const items = [{ phone: '13900009001' }];
		const first = await runSms(sendParameters(), items);
		expect(first.json()[0]).toMatchObject({ sent: true, taskId: expect.any(String) });

		const repeated = await runSms(sendParameters(), items);
		expect(repeated.error).toBeUndefined();
		expect(repeated.json()[0]).toMatchObject({ sent: false, taskId: null, costYuan: 0 });

		// A restart: the process forgets its executions, the durable store keeps the records.
		forgetAllExecutionMemory();
		expect((await runSms(sendParameters(), items)).json()[0].sent).toBe(false);
		expect(acceptedSends()).toBe(1);

		expect((await runSms(sendParameters({}, { repeatWindowMinutes: 0 }), items)).json()[0].sent).toBe(true);
		expect(acceptedSends()).toBe(2);

		// After the window (10 minutes) the same message is sent again.
		setClock('2026-11-22T02:41:00.000Z');
		expect((await runSms(sendParameters(), items)).json()[0].sent).toBe(true);
		expect(acceptedSends()).toBe(3);
	});

	it('a send the gateway refused is not recorded: another execution may send it', async () => {
		freezeClock();
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/send', retryAfterSeconds: 0 }] });
		const parameters = sendParameters({}, { perMinute: 1 });
		expect((await runSms(parameters, [{ phone: '13900009002' }], { credential: { maxRetries: 0 } })).error?.message).toMatch(/429/);
		const retried = await runSms(parameters, [{ phone: '13900009002' }]);
		expect(retried.json()[0]).toMatchObject({ sent: true, taskId: expect.any(String) });
		expect(acceptedSends()).toBe(1);
	});

	it('a send whose outcome is unknown stays recorded: a retried execution does not send it again', async () => {
		freezeClock();
		emulator.setFaults({ sequence: [{ kind: 'reset', path: '/sms/send' }] });
		expect((await runSms(sendParameters(), [{ phone: '13900009003' }])).error?.message).toMatch(/may have/);
		const retried = await runSms(sendParameters(), [{ phone: '13900009003' }]);
		expect(retried.json()[0].sent).toBe(false);
		expect(sendRequests()).toBe(1);
	});

	it('five messages while the store refuses every write (a Redis at its memory limit): nothing is sent, and the next run sends all five', async () => {
		freezeClock();
		const items = ['13900009011', '13900009012', '13900009013', '13900009014', '13900009015'].map((phone) => ({ phone }));
		let label = '';
		const refused = await withStore(
			(store) => {
				label = store.label;
				return async () => Promise.reject(new StoreUnavailable(store.label, 'OOM command not allowed when used memory > maxmemory'));
			},
			async () => await runSms(sendParameters(), items),
		);
		expect(refused.error?.message).toBe(`SMS not sent: the send records in ${label} could not be used: OOM command not allowed when used memory > maxmemory`);
		// The store refused every write: nothing was reserved, so nothing "may still be" there (issue 41 item 3).
		expect(refused.error?.description).toBe('Nothing was sent, as without the records a retried execution could text people twice. Nothing stays recorded: running again sends every message.');
		expect(sendRequests()).toBe(0);
		const again = await runSms(sendParameters(), items);
		expect(again.json().map((item) => item.sent === false)).toEqual([false, false, false, false, false]);
		expect(acceptedSends()).toBe(5);
	});

	it('a claim applied whose answer was lost, the store down until the run ends: the item says nothing was sent and that this process releases its record; the next execution sends it (issue 44)', async () => {
		freezeClock();
		let updates = 0;
		let down = true;
		const failed = await withStore(
			(store) => async (keys, decide, guess) => {
				// The account scope's record (issue 41) is written on the credential's first run: not a send record.
				if (keys.some((key) => key.startsWith('scope-links|')) || ++updates === 1 || !down) return await store.update(keys, decide, guess);
				// The claim reaches the store, its answer is lost; the store is then unreachable.
				if (updates === 2) await store.update(keys, decide, guess);
				throw new StoreUnavailable(store.label, `${store.label}: the connection dropped (injected)`, { maybeWritten: updates === 2 });
			},
			async () => await runSms(sendParameters(), [{ phone: '13900009031' }], { settings: { continueOnFail: true } }),
		);
		expect(failed.json()[0].error).toMatch(/^SMS not sent: /);
		expect(failed.json()[0].errorDescription).toMatch(
			/^Nothing was sent, as without the records .* Nothing was sent for item 1, but .* failed while its record changed, so its record may still say the send started\. This n8n process releases its record as soon as .* answers again .*; the next execution then sends the message\. An execution in another n8n process before that, or after a restart of this one, finds its record unchanged: another execution skips the message as a repeat for 10 minutes/,
		);
		expect(sendRequests()).toBe(0);
		down = false;
		const next = await runSms(sendParameters(), [{ phone: '13900009031' }]);
		expect(next.json()[0]).toMatchObject({ sent: true, taskId: expect.any(String) });
		expect(acceptedSends()).toBe(1);
	});

	it('with Repeat Window 0, a reservation a failed run could not release is taken over: the next execution sends it, not refused as message 2 this minute', async () => {
		freezeClock();
		const parameters = sendParameters({}, { repeatWindowMinutes: 0, perMinute: 1 });
		let updates = 0;
		// The reserve goes through; then the store fails every update: the claim, and the release after it.
		const failed = await withStore(
			(store) => async (keys, decide, guess) => {
				// The account scope's record (issue 41) is written on the credential's first run: not a send record.
				if (!keys.some((key) => key.startsWith('scope-links|')) && ++updates > 1) throw new StoreUnavailable(store.label, `${store.label}: the connection dropped (injected)`);
				return await store.update(keys, decide, guess);
			},
			async () => await runSms(parameters, [{ phone: '13900009021' }], { settings: { continueOnFail: true } }),
		);
		// The store refused the release (nothing written): the reservation is there for certain, not "may still be".
		expect(failed.json()[0].errorDescription).toMatch(/The reservations of item 1 are still in .*; they are only reservations, so the next execution of this node takes them over and sends those messages/);
		expect(sendRequests()).toBe(0);
		const next = await runSms(parameters, [{ phone: '13900009021' }]);
		expect(next.json()[0]).toMatchObject({ sent: true, taskId: expect.any(String) });
		expect(acceptedSends()).toBe(1);
	});

	it('two executions reserve the same message; the first to claim it sends it, though the other took it over and then stops and lets it go', async () => {
		freezeClock();
		// Code "bad" names a variable the template lacks: the gateway refuses that send, which stops execution B's batch.
		const parameters = sendParameters({ variables: { variable: [{ name: '={{ $json.code === "bad" ? "other" : "code" }}', value: '={{ $json.code ?? "1234" }}' }] } });
		const gate = () => {
			let open = () => undefined as void;
			const opened = new Promise<void>((resolve) => (open = resolve));
			return { open, opened };
		};
		const aReserved = gate();
		const bReserved = gate();
		const aClaimed = gate();
		const done = { A: 0, B: 0 };
		const executionOf = (keys: readonly string[]) => (['A', 'B'] as const).find((name) => keys.some((key) => key.startsWith('sms-send|') && key.includes(`|execution ${name}|`)));
		// A reserves; B reserves (taking A's reservation over, as if A had stopped); A claims; only then does B go on, fail and stop.
		const results = await withStore(
			(store) => async (keys, decide, guess) => {
				const execution = executionOf(keys);
				if (execution && done[execution] > 0) await (execution === 'A' ? bReserved : aClaimed).opened;
				const result = await store.update(keys, decide, guess);
				if (execution) done[execution]++;
				if (execution === 'A') (done.A === 1 ? aReserved : aClaimed).open();
				if (execution === 'B' && done.B === 1) bReserved.open();
				return result;
			},
			async () => {
				const options = { credential: { maxConcurrent: 1, maxRetries: 0 } };
				const a = runSms(parameters, [{ phone: '13900009031' }], { ...options, executionId: 'execution A' });
				await aReserved.opened;
				const b = runSms(parameters, [{ phone: '13900009032', code: 'bad' }, { phone: '13900009031' }], { ...options, executionId: 'execution B' });
				return await Promise.all([a, b]);
			},
		);
		const [a, b] = results;
		expect(b.error?.message).toMatch(/Item 1/);
		expect(a.json()[0]).toMatchObject({ sent: true, taskId: expect.any(String) });
		expect(emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.code === 0 && call.phone === '13900009031')).toHaveLength(1);
	});

	it('one store update reserves the batch, one starts the sends the batch starts at once (each still claimed before its paid call), one marks the batch sent', async () => {
		freezeClock();
		let updates = 0;
		let deliveryUpdates = 0;
		let usageWrites = 0;
		await withStore(
			// The delivery records (store/sendsByTask.ts, for the SMS Trigger) are written beside the send records, and the run's
			// usage counts (usage/counts.ts) after them: counted apart (a usage update that wrote nothing only re-read a stale day).
			(store) => async (keys, decide) => {
				if (!keys.some((key) => key.startsWith('usage|'))) return (keys.every(isDeliveryKey) ? deliveryUpdates++ : updates++, await store.update(keys, decide));
				return await store.update(keys, (values, now) => {
					const decision = decide(values, now);
					if (decision.writes.length > 0) usageWrites++;
					return decision;
				});
			},
			async () => await runSms(sendParameters(), [{ phone: '13900009004' }, { phone: '13900009005' }, { phone: '13900009006' }, { phone: '13900009007' }]),
		);
		// Reserve, start, mark sent; and once per credential and store, its account scope's record (issue 41).
		expect(updates).toBe(1 + 1 + 1 + 1);
		expect(usageWrites).toBe(1);
		expect(deliveryUpdates).toBeGreaterThanOrEqual(1);
		expect(deliveryUpdates).toBeLessThanOrEqual(4);
	});
});

describe('signature and template changes across executions', () => {
	it('a retried execution does not create the same signature again; a refused create is not recorded', async () => {
		const create = { resource: 'signature', operation: 'create', name: '={{ $json.name }}', remark: '验证码' };
		const first = await runSms(create, [{ name: '数据网关' }]);
		expect(first.error).toBeUndefined();
		const retried = await runSms(create, [{ name: '数据网关' }]);
		expect(retried.json()[0]).toMatchObject({ created: false, name: '数据网关' });
		expect(emulator.ledger().byPath['/sms/add_sign']?.calls).toBe(1);

		// Refused by the gateway (a 429: certainly not made): not recorded.
		emulator.setFaults({ sequence: [{ kind: '429', path: '/sms/add_sign', retryAfterSeconds: 0 }] });
		expect((await runSms(create, [{ name: '网关数据' }], { credential: { maxRetries: 0 } })).error?.message).toMatch(/429/);
		expect((await runSms(create, [{ name: '网关数据' }])).json()[0].created).toBeUndefined();
		expect(emulator.ledger().byPath['/sms/add_sign']?.calls).toBe(3);
	});
});

describe('spending cap (credential: Max Spend per Execution)', () => {
	it('an over-cap SMS batch makes no paid call, and the error names the estimate and the cap', async () => {
		const result = await runSms(sendParameters(), [{ phone: '13900010001' }, { phone: '13900010002' }, { phone: '13900010003' }], {
			credential: { maxSpendPerExecution: 0.1 },
		});
		expect(result.error?.message).toMatch(/estimated at 0\.105 yuan .*above the cap of 0\.1 yuan/);
		expect(result.error?.description).toMatch(/No paid call was made/);
		expect(sendRequests()).toBe(0);
		// Nothing was recorded either: the same batch under a higher cap sends all three.
		const allowed = await runSms(sendParameters(), [{ phone: '13900010001' }, { phone: '13900010002' }, { phone: '13900010003' }], {
			credential: { maxSpendPerExecution: 0.2 },
		});
		expect(allowed.json().map((item) => item.costYuan)).toEqual([0.035, 0.035, 0.035]);
		expect(acceptedSends()).toBe(3);
	});

	function runLookups(steps: WorkflowStep[], items: IDataObject[], extra: IDataObject) {
		return runWorkflow({ steps, items, credentials: credential({ appCodeSecret: emulator.demo.memberAppCode, ...extra }) });
	}
	const detail = (name: string, plate: string): WorkflowStep => ({
		name,
		type: vehicle as INodeType,
		parameters: { resource: 'vehicle', operation: 'getDetail', carNumber: plate, carType: '02' },
	});

	it('counts distinct paid questions only, and what earlier nodes of the execution spent', async () => {
		const plates = [{ plate: '京A12345' }, { plate: '京A12345' }, { plate: '沪B54321' }];
		const lookups = { ...detail('Detail', '={{ $json.plate }}') };
		const within = await runLookups([lookups], plates, { maxSpendPerExecution: 2.4 });
		expect(within.error).toBeUndefined();
		// Two billed questions for three items; the item that reused an answer costs nothing.
		expect(within.json().map((item) => item.costYuan)).toEqual([1.2, 0, 1.2]);
		expect(emulator.ledger().byPath['/car/query'].billedCalls).toBe(2);

		emulator.resetLedger();
		const twoNodes = await runLookups([detail('First', '京A12345'), detail('Second', '粤B12345')], [{}], { maxSpendPerExecution: 2 });
		expect(twoNodes.error?.node).toBe('Second');
		expect(twoNodes.error?.message).toBe(
			"Spending cap: this node's paid calls are estimated at 1.2 yuan (1 × Get Vehicle Detail at 1.2 yuan); with 1.2 yuan already spent in this execution with this credential that is 2.4 yuan, above the cap of 2 yuan",
		);
		expect(emulator.ledger().byPath['/car/query'].calls).toBe(1);
	});

	it('Copyright Return All counts pages as they come and stops at the cap', async () => {
		const result = await runLookups(
			[{ name: 'Copyrights', type: enterprise as INodeType, parameters: { resource: 'copyright', operation: 'getAll', keyword: 'many works', returnAll: true } }],
			[{}],
			{ maxSpendPerExecution: 0.5 },
		);
		expect(result.error?.message).toMatch(/^Spending cap: the next paid call \(0\.2 yuan\) would bring this execution's spend with this credential to 0\.6 yuan, above the cap of 0\.5 yuan/);
		expect(emulator.ledger().byPath['/enterprise/copyright'].calls).toBe(2);
	});
});

describe('copyright pages are paid once per execution', () => {
	const listing = (extra: IDataObject): WorkflowStep => ({
		name: 'Copyrights',
		type: enterprise as INodeType,
		// Version 1: these checks read the gateway's record names (RegisterNo).
		typeVersion: 1,
		parameters: { resource: 'copyright', operation: 'getAll', keyword: 'many works', ...extra },
	});
	const runListing = (step: WorkflowStep, items: IDataObject[], extra: IDataObject = {}) =>
		runWorkflow({ steps: [step], items, credentials: credential({ appCodeSecret: emulator.demo.memberAppCode, ...extra }) });

	it('two items with the same keyword and different limits share pages', async () => {
		const result = await runListing(listing({ returnAll: false, limit: '={{ $json.limit }}' }), [{ limit: 15 }, { limit: 35 }]);
		expect(result.error).toBeUndefined();
		expect(result.json()).toHaveLength(50);
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 4, billedCalls: 4 });
		// The costs add up to the bill.
		const total = result.json().reduce((sum, item) => sum + (item.costYuan as number), 0);
		expect(Math.round(total * 100) / 100).toBe(0.8);
	});

	it('Retry On Fail after a failure on page 3 does not pay pages 1 and 2 again', async () => {
		emulator.setFaults({ sequence: [{ kind: '500', path: '/enterprise/copyright', skip: 2 }] });
		const retried = await runWorkflow({
			steps: [{ ...listing({ returnAll: true }), settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 } }],
			items: [{}],
			credentials: credential({ appCodeSecret: emulator.demo.memberAppCode, maxRetries: 0 }),
		});
		expect(retried.error).toBeUndefined();
		expect(retried.json()).toHaveLength(47);
		// Pages 1 and 2, the failed page 3, then pages 3, 4 and 5: 5 billed pages.
		expect(emulator.ledger().byPath['/enterprise/copyright']).toMatchObject({ calls: 6, billedCalls: 5, faulted: 1 });
	});

	it('Return All follows totalRecords when the gateway silently serves smaller pages', async () => {
		emulator.configure({ copyrightMaxPageSize: 5 });
		try {
			const result = await runListing(listing({ returnAll: true }), [{}]);
			expect(result.json()).toHaveLength(47);
			expect(new Set(result.json().map((record) => record.RegisterNo)).size).toBe(47);
			expect(emulator.ledger().byPath['/enterprise/copyright'].calls).toBe(10);
		} finally {
			emulator.configure({ copyrightMaxPageSize: undefined });
		}
	});
});
