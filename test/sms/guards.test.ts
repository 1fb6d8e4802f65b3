/**
 * Issue 34's guards through the real engine: the opt-out list (its own executions, then Send,
 * Send and Check Delivery and Preview), the content checks, Refuse Content Warnings and Send Window.
 * "Nothing recorded or counted" is read from the store: every write the node made is captured.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { DurableStore, StoreWrite } from '../../nodes/shared/store/durableStore';
import { hostClock } from '../../nodes/shared/store/hostClock';
import * as openStore from '../../nodes/shared/store/openStore';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { codeVariable, sendParameters } from '../harness/sms';
import { runWorkflow, type WorkflowRunResult, type WorkflowStep } from '../harness/workflow';

const HOUR = 3_600_000;
let emulator: Emulator;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const sms = new DataGatewaySms();
const realClock = hostClock.now;
afterEach(() => {
	hostClock.now = realClock;
	jest.restoreAllMocks();
});

/** `typeVersion`: the SMS node's version (the newest when left out); 1.4 refuses an opted-out number where 1.5 skips it (leaving.test.ts). */
function runSms(parameters: INodeParameters, items: IDataObject[], settings?: WorkflowStep['settings'], typeVersion?: number) {
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters, settings, typeVersion }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } },
	});
}
const optOut = (operation: string) => ({ resource: 'optOut', operation, phone: '={{ $json.phone }}' });
const send = (extra: INodeParameters = {}) => sendParameters(emulator, extra);
const hints = (result: WorkflowRunResult) => (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => ({ type: hint.type, message: hint.message }));
const sendRequests = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;
const calls = (path: string) => emulator.ledger().byPath[path]?.calls ?? 0;

/** What the nodes do with the store while `work` runs: every update's writes, every read's keys, every clock read. */
async function watchStore<T>(work: () => Promise<T>) {
	const seen = { writes: [] as StoreWrite[], reads: [] as string[][], clockReads: 0 };
	const open = openStore.openDurableStore;
	jest.spyOn(openStore, 'openDurableStore').mockImplementation(async (...args) => {
		const store = await open(...args);
		const watched: DurableStore = {
			kind: store.kind,
			label: store.label,
			now: async () => {
				seen.clockReads++;
				return await store.now();
			},
			read: async (keys) => {
				seen.reads.push([...keys]);
				return await store.read(keys);
			},
			update: async (keys, decide, guess) =>
				await store.update(
					keys,
					(values, now) => {
						const decision = decide(values, now);
						seen.writes.push(...decision.writes);
						return decision;
					},
					guess,
				),
		};
		return watched;
	});
	const result = await work();
	jest.restoreAllMocks();
	return { result, ...seen };
}

describe('the opt-out list (SMS 1.4: an opted-out number is refused)', () => {
	it('a number added in one execution is refused by Send in another, before any call, record or count; removed, it is sent', async () => {
		const added = await watchStore(() => runSms(optOut('add'), [{ phone: '+86 139-0000-1111' }]));
		expect(added.result.error).toBeUndefined();
		expect(added.result.json()).toEqual([{ phone: '13900001111', optedOut: true, alreadyListed: false }]);
		// The store holds no number in a value (key names are hashed by the store itself); the list's size is kept beside it.
		const listWrites = added.writes.filter((write) => write.key.startsWith('opt-out|'));
		expect(listWrites).toHaveLength(1);
		expect(listWrites[0].value).not.toContain('13900001111');
		expect(listWrites[0].ttlMs).toBeUndefined();
		expect(added.writes.filter((write) => write.key.startsWith('opt-out-size|')).map((write) => write.value)).toEqual(['1']);

		const refused = await watchStore(() => runSms(send(), [{ phone: '13900001111' }], undefined, 1.4));
		expect(refused.result.error?.message).toBe("Item 1: Phone Number 13900001111 is on this account's opt-out list: not sent");
		expect(refused.result.error?.description).toMatch(/Opt-Out > Remove/);
		expect(sendRequests()).toBe(0);
		// Nothing recorded or counted against a limit; only the skip, in the account's usage counts.
		expect(refused.writes.map((write) => [write.key.split('|')[0], write.value])).toEqual([
			['usage', '{"sms.skipped.optedOut":1}'],
			['usage', '{"sms.skipped.optedOut":1}'],
		]);

		const checked = await runSms(optOut('check'), [{ phone: '13900001111' }, { phone: '13900002222' }]);
		expect(checked.json()).toEqual([
			{ phone: '13900001111', optedOut: true, optedOutAt: expect.stringMatching(/\+08:00$/) },
			{ phone: '13900002222', optedOut: false },
		]);

		const removed = await runSms(optOut('remove'), [{ phone: '0086 13900001111' }]);
		expect(removed.json()).toEqual([{ phone: '13900001111', optedOut: false, removed: true }]);
		const sent = await runSms(send(), [{ phone: '13900001111' }]);
		expect(sent.error?.message).toBeUndefined();
		expect(sent.json()[0]).toMatchObject({ taskId: expect.any(String) });
		expect(sendRequests()).toBe(1);
	});

	it('reads the list once per run for every item, and under Continue On Fail sends the others', async () => {
		await runSms(optOut('add'), [{ phone: '13900003333' }]);
		const items = [{ phone: '13900003331' }, { phone: '13900003333' }, { phone: '13900003332' }];
		const run = await watchStore(() => runSms(send(), items, { continueOnFail: true }, 1.4));
		// One read: each number under the account's scope and under the key the release before wrote (issue 41).
		const listReads = run.reads.filter((keys) => keys.some((key) => key.startsWith('opt-out|')));
		expect(listReads).toHaveLength(1);
		expect(listReads[0]).toHaveLength(6);
		const [first, second, third] = run.result.json();
		expect(first).toMatchObject({ taskId: expect.any(String) });
		expect(second).toMatchObject({ error: "Item 2: Phone Number 13900003333 is on this account's opt-out list: not sent" });
		expect(third).toMatchObject({ taskId: expect.any(String) });
		expect(sendRequests()).toBe(2);
		// The refused item reserved nothing: every write is about the two numbers sent.
		expect(run.writes.filter((write) => write.key.includes('13900003333'))).toEqual([]);
	});

	it('Send and Check Delivery refuses an opted-out number too', async () => {
		await runSms(optOut('add'), [{ phone: '13900004444' }]);
		const result = await runSms(send({ operation: 'sendAndCheck', waitTimeoutSeconds: 1 }), [{ phone: '13900004444' }], undefined, 1.4);
		expect(result.error?.message).toMatch(/opt-out list: not sent/);
		expect(sendRequests()).toBe(0);
	});

	it('Preview says that Send would refuse an opted-out number', async () => {
		await runSms(optOut('add'), [{ phone: '13900005555' }]);
		const result = await runSms({ ...send(), operation: 'preview' }, [{ phone: '13900005555' }], undefined, 1.4);
		expect(result.error?.message).toBe("Item 1: Phone Number 13900005555 is on this account's opt-out list: Send would refuse it");
		expect(sendRequests()).toBe(0);
	});

	it('refuses a bad number before the store is touched, naming the field', async () => {
		const run = await watchStore(() => runSms(optOut('add'), [{ phone: '12345' }]));
		expect(run.result.error?.message).toMatch(/^Item 1: Phone Number "12345" is not a domestic mobile number/);
		expect(run.writes).toEqual([]);
	});
});

describe('content checks on Template and Signature Create, and Preview', () => {
	const template = (content: string) => ({ resource: 'template', operation: 'create', name: '通知', content, remark: '订单通知' });

	it('Template Create: a warning does not stop the item; it comes out as contentWarnings and one hint', async () => {
		const result = await runSms(template('您的订单已发货，加微信领取优惠。'), [{}]);
		expect(result.error).toBeUndefined();
		expect(calls('/sms/add_template')).toBe(1);
		expect(result.json()[0].contentWarnings).toEqual([expect.stringMatching(/^Content holds "加微信", which the gateway's rules list as prohibited content \(group or contact-adding requests\)/)]);
		expect(hints(result).filter((hint) => hint.type === 'warning')).toEqual([{ type: 'warning', message: expect.stringMatching(/^Content checks: 1 warning/) }]);
	});

	it('Template Create: a link to an app test-distribution site is refused before the call, naming Content', async () => {
		const result = await runSms(template('新版本请到 www.pgyer.com/abc 下载。'), [{}]);
		expect(result.error?.message).toMatch(/^Item 1: Content links to an app test-distribution site: "www\.pgyer\.com\/abc"/);
		expect(calls('/sms/add_template')).toBe(0);
	});

	it('Signature Create: test wording is refused before the call, naming Signature Text', async () => {
		const result = await runSms({ resource: 'signature', operation: 'create', name: '数据网关测试', remark: '验证码' }, [{}]);
		expect(result.error?.message).toBe('Item 1: Signature Text holds test wording: "测试"');
		expect(calls('/sms/add_sign')).toBe(0);
	});

	it('Preview shows the warnings of the message with its values as contentWarnings', async () => {
		const result = await runSms({ ...send(), operation: 'preview', variables: codeVariable('加微信领取') }, [{ phone: '13900006666' }]);
		expect(result.error).toBeUndefined();
		expect(result.json()[0]).toMatchObject({ sent: false, contentWarnings: [expect.stringMatching(/^Message holds "加微信"/)] });
		const plain = await runSms({ ...send(), operation: 'preview' }, [{ phone: '13900006666' }]);
		expect(plain.json()[0].contentWarnings).toBeUndefined();
	});
});

describe('Refuse Content Warnings', () => {
	it('refuses a warned message before it is sent, recorded or counted, reading the template for it; off, it is sent', async () => {
		const warned = { variables: codeVariable('加微信领取') };
		const refused = await watchStore(() => runSms(send({ ...warned, sendOptions: { refuseContentWarnings: true } }), [{ phone: '13900007777' }]));
		expect(refused.result.error?.message).toMatch(/^Item 1: Message holds "加微信"/);
		expect(refused.result.error?.description).toMatch(/Refuse Content Warnings is on/);
		expect(sendRequests()).toBe(0);
		expect(refused.writes).toEqual([]);
		// The template was read for it: free queries.
		expect(calls('/sms/query_template')).toBe(1);

		const sent = await runSms(send(warned), [{ phone: '13900007777' }]);
		expect(sent.error).toBeUndefined();
		expect(sendRequests()).toBe(1);
	});
});

describe('Send Window', () => {
	const hours = { startHour: 8, startMinute: 0, endHour: 21, endMinute: 0 };
	const window = { sendWindow: { window: { outside: 'refuse', ...hours } } };
	const chinaTime = (iso: string) => {
		const at = Date.parse(`${iso}+08:00`);
		hostClock.now = () => at;
	};

	it('closed: refused before any record or count, with opensAt for a Wait node; a send in the window goes out', async () => {
		chinaTime('2026-11-26T22:30:00');
		const items = [{ phone: '13900008881' }, { phone: '13900008882' }];
		const closed = await watchStore(() => runSms(send({ sendOptions: window }), items, { onError: 'continueErrorOutput' }));
		expect(closed.result.error).toBeUndefined();
		expect(closed.result.items('SMS', 0)).toEqual([]);
		const errors = closed.result.items('SMS', 1).map((item) => item.json);
		expect(errors).toHaveLength(2);
		expect(errors[0]).toMatchObject({
			phone: '13900008881',
			error: 'Item 1: outside the send window 08:00–21:00 China time; opens at 2026-11-27T08:00:00+08:00; route it to a Wait node',
			details: { outsideSendWindow: true, opensAt: '2026-11-27T08:00:00+08:00', opensAtMs: Date.parse('2026-11-27T08:00:00+08:00'), sendWindow: '08:00–21:00' },
		});
		expect(sendRequests()).toBe(0);
		// Nothing recorded or counted against a limit; only the skips, in the account's usage counts (its day and month),
		// after the credential's first use linked it to its account's scope.
		expect(closed.writes.map((write) => [write.key.split('|')[0], write.value])).toEqual([
			['scope-links', expect.any(String)],
			['credential-scope', expect.stringMatching(/^gateway:http:\/\/127\.0\.0\.1:\d+\|[0-9a-f]+$/)],
			['usage', '{"sms.skipped.outsideWindow":2}'],
			['usage', '{"sms.skipped.outsideWindow":2}'],
		]);
		// The store's clock was read once for the run, not once per item.
		expect(closed.clockReads).toBe(1);

		chinaTime('2026-11-27T08:00:00');
		const open = await runSms(send({ sendOptions: window }), items);
		expect(open.error).toBeUndefined();
		expect(open.json().map((item) => typeof item.taskId)).toEqual(['string', 'string']);
		expect(sendRequests()).toBe(2);
	});

	it('from 1.5, the option as added (Outside These Hours left at Send Anyway) refuses nothing at 23:18; a node saved with 1.4 keeps its window', async () => {
		chinaTime('2026-11-26T23:18:00');
		const added = await runSms(send({ sendOptions: { sendWindow: { window: hours } } }), [{ phone: '13900008871' }]);
		expect(added.error).toBeUndefined();
		expect(typeof added.json()[0].taskId).toBe('string');
		const saved = await runSms(send({ sendOptions: { sendWindow: { window: hours } } }), [{ phone: '13900008872' }], undefined, 1.4);
		expect(saved.error?.message).toMatch(/^Item 1: outside the send window 08:00–21:00 China time/);
		expect(sendRequests()).toBe(1);
	});

	it("reads the store's clock once per run, and only when a window is set", async () => {
		chinaTime('2026-11-26T10:30:00');
		const items = (first: number) => [first, first + 1, first + 2].map((last) => ({ phone: `1390000${last}` }));
		const without = await watchStore(() => runSms(send(), items(8883)));
		const within = await watchStore(() => runSms(send({ sendOptions: window }), items(8893)));
		expect(without.result.error).toBeUndefined();
		expect(within.result.error).toBeUndefined();
		expect(within.clockReads).toBe(without.clockReads + 1);
		expect(sendRequests()).toBe(6);
	});
});

describe('examples/opt-out.json', () => {
	it('its Add to Opt-Out List node, as saved, lists the sample number so that Send refuses it', async () => {
		type Example = { nodes: Array<{ name: string; typeVersion: number; parameters: INodeParameters & { jsCode?: string } }> };
		const example = JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', 'opt-out.json'), 'utf8')) as Example;
		const node = (name: string) => example.nodes.find((candidate) => candidate.name === name) as Example['nodes'][number];
		const sample = /phone: '([^']+)'/.exec(String(node('Sample Request').parameters.jsCode))?.[1];
		const added = await runWorkflow({
			steps: [{ name: 'SMS', type: sms, parameters: node('Add to Opt-Out List').parameters, typeVersion: node('Add to Opt-Out List').typeVersion }],
			items: [{ body: { phone: sample } }],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } },
		});
		expect(added.json()).toEqual([{ phone: '13912340000', optedOut: true, alreadyListed: false }]);
		const refused = await runSms(send(), [{ phone: '13912340000' }], undefined, 1.4);
		expect(refused.error?.message).toMatch(/opt-out list: not sent/);
		expect(sendRequests()).toBe(0);
	});
});
