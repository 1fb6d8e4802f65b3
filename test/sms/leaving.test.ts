/**
 * Issue 41 (part B) through the real engine: the opt-out list and the Send Window decided again as
 * each message leaves (in its claim's store update), SMS 1.5 skipping what must not be sent with
 * `sent: false` and why while the others go out, and the gateway's forbidden content refused by
 * default. "Mid-batch" is made deterministic by acting inside the store's update of the next
 * message's claim: sends run one at a time (Max Concurrent Requests 1), so that claim is the moment
 * the next message leaves.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { DurableStore, StoreWrite } from '../../nodes/shared/store/durableStore';
import { hostClock } from '../../nodes/shared/store/hostClock';
import * as openStore from '../../nodes/shared/store/openStore';
import { closeAllRedis } from '../../nodes/shared/testing';
import { GatewayClient } from '../../nodes/shared/transport/gatewayClient';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
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

let credential: IDataObject = {};
function runSms(parameters: INodeParameters, items: IDataObject[], options: { settings?: WorkflowStep['settings']; typeVersion?: number } = {}) {
	return runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters, settings: options.settings, typeVersion: options.typeVersion }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxConcurrent: 1, ...credential } },
	});
}
const optOut = (phone: string) => runSms({ resource: 'optOut', operation: 'add', phone: '={{ $json.phone }}' }, [{ phone }]);
const send = (extra: INodeParameters = {}) => sendParameters(emulator, extra);
const sentTo = () => emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call').map((call) => (call as { phone?: string }).phone);
const sendRequests = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;
const hints = (result: WorkflowRunResult) => (result.run.data.resultData.runData.SMS?.[0]?.hints ?? []).map((hint) => hint.message);
const phones = (...lasts: number[]) => lasts.map((last) => ({ phone: `1390041${String(last).padStart(4, '0')}` }));

/**
 * Watches the node's store: every write, and `atClaim(n)` runs inside the n-th claim's update (an
 * update naming an opt-out entry), before the store decides it: what another process does just
 * before that message leaves.
 */
function watchStore(atClaim: (claim: number) => Promise<void> | void = () => undefined) {
	const seen = { writes: [] as StoreWrite[], claims: 0 };
	const open = openStore.openDurableStore;
	let inside = false;
	jest.spyOn(openStore, 'openDurableStore').mockImplementation(async (...args) => {
		const store = await open(...args);
		const watched: DurableStore = {
			kind: store.kind,
			label: store.label,
			now: async () => await store.now(),
			read: async (keys) => await store.read(keys),
			update: async (keys, decide, guess) => {
				if (!inside && keys.some((key) => key.startsWith('opt-out|')) && keys.some((key) => key.includes('sms-send|'))) {
					inside = true;
					await atClaim(++seen.claims);
					inside = false;
				}
				return await store.update(keys, (values, now) => {
					const decision = decide(values, now);
					if (!inside) seen.writes.push(...decision.writes);
					return decision;
				}, guess);
			},
		};
		return watched;
	});
	return seen;
}

describe('SMS 1.5: an opted-out number is skipped, the others go out', () => {
	it('a campaign of three with one opted-out number sends two under the default On Error; the third says sent false and why; the bill counts it', async () => {
		const [first, listed, third] = phones(1, 2, 3);
		await optOut(listed.phone);
		const store = watchStore();
		const result = await runSms(send(), [first, listed, third]);
		expect(result.error).toBeUndefined();
		expect(result.json()).toEqual([
			expect.objectContaining({ phone: first.phone, sent: true, taskId: expect.any(String) }),
			expect.objectContaining({ phone: listed.phone, sent: false, taskId: null, optedOut: true, costYuan: 0, notSentBecause: expect.stringMatching(/^the number is on this account's opt-out list/) }),
			expect.objectContaining({ phone: third.phone, sent: true, taskId: expect.any(String) }),
		]);
		expect(sentTo()).toEqual([first.phone, third.phone]);
		// Nothing was recorded or counted for the opted-out number.
		expect(store.writes.filter((write) => write.phone === listed.phone)).toEqual([]);
		expect(hints(result)[0]).toMatch(/^2 SMS sent, .*; 1 opted-out number skipped/);
	});

	it('is skipped when another number appears twice before it in the batch (one read for the batch, nothing recorded for it)', async () => {
		const [twice, listed, last] = phones(11, 12, 13);
		await optOut(listed.phone);
		const store = watchStore();
		// The second message to the same number is refused by Max per Number per Minute (1): an error item.
		const result = await runSms(send(), [twice, twice, listed, last], { settings: { continueOnFail: true } });
		expect(result.json().map((item) => [item.phone, item.error === undefined ? item.sent : 'failed'])).toEqual([
			[twice.phone, true],
			[twice.phone, 'failed'],
			[listed.phone, false],
			[last.phone, true],
		]);
		expect(sentTo()).toEqual([twice.phone, last.phone]);
		expect(store.writes.filter((write) => write.phone === listed.phone)).toEqual([]);
	});

	it('Send and Check Delivery says "not sent (opted out)" for it and follows the others', async () => {
		const [first, listed] = phones(21, 22);
		await optOut(listed.phone);
		const result = await runSms(send({ operation: 'sendAndCheck', waitTimeoutSeconds: 1 }), [first, listed]);
		expect(result.error).toBeUndefined();
		expect(result.json().map((item) => [item.phone, item.sent, item.outcome])).toEqual([
			[first.phone, true, expect.any(String)],
			[listed.phone, false, 'not sent (opted out)'],
		]);
		expect(sendRequests()).toBe(1);
	});

	it('Preview shows the number as one Send would skip, without failing the others; its bill counts it apart', async () => {
		const [first, listed] = phones(31, 32);
		await optOut(listed.phone);
		const result = await runSms({ ...send(), operation: 'preview' }, [first, listed]);
		expect(result.error).toBeUndefined();
		expect(result.json()).toEqual([
			expect.objectContaining({ phone: first.phone, sent: false, message: expect.stringContaining('1234') }),
			{ phone: listed.phone, signId: Number(emulator.demo.signatureId), templateId: Number(emulator.demo.templateId), sent: false, optedOut: true, notSentBecause: "the number is on this account's opt-out list: Send would skip it" },
		]);
		expect(hints(result)[0]).toMatch(/^Preview only: no SMS sent, 0 yuan; sending this SMS would cost .*; 1 opted-out number would be skipped$/);
	});
});

describe('a number opted out while the batch is sending is not texted', () => {
	const addedBeforeSecondLeaves = (phone: string) => async (claim: number) => {
		if (claim === 2) await optOut(phone);
	};

	it('SMS 1.5 (SQLite store): skipped with sent false; the message before it went out, the one after it too', async () => {
		const [first, added, last] = phones(41, 42, 43);
		watchStore(addedBeforeSecondLeaves(added.phone));
		const result = await runSms(send(), [first, added, last]);
		expect(result.error).toBeUndefined();
		expect(result.json().map((item) => [item.phone, item.sent, item.optedOut])).toEqual([
			[first.phone, true, undefined],
			[added.phone, false, true],
			[last.phone, true, undefined],
		]);
		expect(sentTo()).toEqual([first.phone, last.phone]);
	});

	it('SMS 1.4: the item fails as an opted-out number does before the batch; the others are sent (Continue On Fail)', async () => {
		const [first, added, last] = phones(51, 52, 53);
		watchStore(addedBeforeSecondLeaves(added.phone));
		const result = await runSms(send(), [first, added, last], { settings: { continueOnFail: true }, typeVersion: 1.4 });
		expect(result.json()[1]).toMatchObject({ error: `Item 2: Phone Number ${added.phone} is on this account's opt-out list: not sent` });
		expect(sentTo()).toEqual([first.phone, last.phone]);
	});

	describe('on Redis, where a claim guesses the entries read before the batch', () => {
		let redis: RunningRedis;
		beforeAll(async () => {
			redis = await startRedis(() => undefined);
		});
		afterAll(async () => {
			credential = {};
			closeAllRedis();
			await redis.stop();
		});

		it('the guess is checked by the store: the number is not texted', async () => {
			credential = { sharedLimitRedisUrl: redis.url };
			const [first, added, last] = phones(61, 62, 63);
			watchStore(addedBeforeSecondLeaves(added.phone));
			const result = await runSms(send(), [first, added, last]);
			expect(result.error).toBeUndefined();
			expect(result.json().map((item) => item.sent)).toEqual([true, false, true]);
			expect(sentTo()).toEqual([first.phone, last.phone]);
		});
	});
});

describe('a batch running across the end of its Send Window sends nothing after it', () => {
	const window = { sendWindow: { window: { startHour: 8, startMinute: 0, endHour: 21, endMinute: 0, outside: 'refuse' } } };
	const chinaTime = (iso: string) => {
		const at = Date.parse(`${iso}+08:00`);
		hostClock.now = () => at;
	};
	const closesBeforeSecondLeaves = (claim: number) => {
		if (claim === 2) chinaTime('2026-11-26T21:00:00');
	};

	it('SMS 1.5: started at 20:59:59, the first message goes out and the rest say sent false, why and when the window opens', async () => {
		chinaTime('2026-11-26T20:59:59');
		watchStore(closesBeforeSecondLeaves);
		const items = phones(71, 72, 73, 74, 75);
		const result = await runSms(send({ sendOptions: window }), items);
		expect(result.error).toBeUndefined();
		const [first, ...rest] = result.json();
		expect(first).toMatchObject({ sent: true, taskId: expect.any(String) });
		for (const item of rest) {
			expect(item).toMatchObject({
				sent: false,
				taskId: null,
				outsideSendWindow: true,
				sendWindow: '08:00–21:00',
				opensAt: '2026-11-27T08:00:00+08:00',
				notSentBecause: 'the send window 08:00–21:00 China time closed before this message left; it opens at 2026-11-27T08:00:00+08:00',
			});
		}
		expect(sendRequests()).toBe(1);
		expect(hints(result)).toEqual(expect.arrayContaining([expect.stringMatching(/^1 SMS sent, .*; 4 SMS not sent: the send window closed during the run/), expect.stringMatching(/^4 SMS not sent: the send window closed/)]));
	});

	it('SMS 1.4: the items after the end fail with the window error (Continue On Fail); nothing is sent after 21:00', async () => {
		chinaTime('2026-11-26T20:59:59');
		watchStore(closesBeforeSecondLeaves);
		const result = await runSms(send({ sendOptions: window }), phones(81, 82, 83), { settings: { continueOnFail: true }, typeVersion: 1.4 });
		expect(result.json().map((item) => item.error ?? item.sent)).toEqual([
			true,
			'Item 2: outside the send window 08:00–21:00 China time; opens at 2026-11-27T08:00:00+08:00; route it to a Wait node',
			'Item 3: outside the send window 08:00–21:00 China time; opens at 2026-11-27T08:00:00+08:00; route it to a Wait node',
		]);
		expect(sendRequests()).toBe(1);
	});

	it('the messages it did not send are released: when the window opens they are sent, not skipped as repeats', async () => {
		chinaTime('2026-11-26T20:59:59');
		watchStore(closesBeforeSecondLeaves);
		const items = phones(91, 92);
		const options = { sendOptions: { ...window, repeatWindowMinutes: 24 * 60 } };
		await runSms(send(options), items);
		jest.restoreAllMocks();
		chinaTime('2026-11-27T08:00:00');
		const next = await runSms(send(options), items);
		expect(next.error).toBeUndefined();
		expect(next.json().map((item) => item.sent)).toEqual([false, true]);
		expect(next.json()[0].notSentBecause).toMatch(/^an earlier execution sent the same message/);
	});
});

describe("the gateway's forbidden content", () => {
	const link = { variables: codeVariable('1234 新版下载 www.pgyer.com/abc ') };

	it('SMS 1.5: a link to an app test-distribution site in a variable is refused by Send with default options, before any call, as Preview says', async () => {
		const refused = await runSms(send(link), phones(101));
		expect(refused.error?.message).toBe('Item 1: Message links to an app test-distribution site: "www.pgyer.com/abc"');
		expect(refused.error?.description).not.toMatch(/Refuse Content Warnings/);
		expect(sendRequests()).toBe(0);
		const preview = await runSms({ ...send(link), operation: 'preview' }, phones(101));
		expect(preview.error?.message).toBe('Item 1: Message links to an app test-distribution site: "www.pgyer.com/abc"');
	});

	it('SMS 1.5: a word warning stays opt-in: sent with default options', async () => {
		const result = await runSms(send({ variables: codeVariable('加微信领取') }), phones(102));
		expect(result.error).toBeUndefined();
		expect(sendRequests()).toBe(1);
	});

	it('SMS 1.4 (saved nodes): sent as before', async () => {
		const result = await runSms(send(link), phones(103), { typeVersion: 1.4 });
		expect(result.error).toBeUndefined();
		expect(sendRequests()).toBe(1);
	});
});

describe('Refuse Content Warnings', () => {
	it('refuses a warning in the signature (Signature Text), naming it', async () => {
		const result = await runSms(send({ sendOptions: { refuseContentWarnings: true, signatureText: '加微信' } }), phones(111));
		expect(result.error?.message).toMatch(/^Item 1: Signature holds "加微信"/);
		expect(sendRequests()).toBe(0);
	});

	it("refuses, naming the fix, when the gateway's answer for the template holds no text; given in Options, it sends", async () => {
		const call = GatewayClient.prototype.call;
		jest.spyOn(GatewayClient.prototype, 'call').mockImplementation(async function (this: GatewayClient, ...args: Parameters<GatewayClient['call']>) {
			const answer = await call.apply(this, args);
			if (args[0] === 'templateGet') delete (answer.data as { content?: string }).content;
			return answer;
		} as GatewayClient['call']);
		const refused = await runSms(send({ sendOptions: { refuseContentWarnings: true } }), phones(112));
		expect(refused.error?.message).toBe("Item 1: Template Content is unknown: the gateway's answer for the template held no text, so Refuse Content Warnings cannot check the message");
		expect(refused.error?.description).toMatch(/Options > Template Content/);
		expect(sendRequests()).toBe(0);
		const sent = await runSms(send({ sendOptions: { refuseContentWarnings: true, templateContent: '您的验证码是${code}，5分钟内有效。' } }), phones(112));
		expect(sent.error).toBeUndefined();
		expect(sendRequests()).toBe(1);
	});
});
