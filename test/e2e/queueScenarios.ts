/**
 * The queue-mode scenarios of `npm run test:e2e:queue` (test/e2e/queue.ts starts the cluster and runs
 * them in order), with the workflow IDs they post to and the readers of the emulator's ledger they judge by.
 */
import assert from 'node:assert/strict';

import type { Emulator } from '../emulator/server';
import { startedOn, until, type QueueHarness } from './queueCluster';
import { distinctPhones, GATEWAY_CAP_PER_SECOND, triggerPath } from './queueWorkflows';

export const log = (text: string) => console.log(`[queue ${new Date().toISOString().slice(11, 19)}] ${text}`);

export const LOOKUPS_A = { id: 'dgwQueueLookupsA', path: 'dgw-lookups-a' };
export const LOOKUPS_B = { id: 'dgwQueueLookupsB', path: 'dgw-lookups-b' };
export const TRIGGER_ID = 'dgwQueueTrigger';
export const SMS = { id: 'dgwQueueSms', path: 'dgw-sms' };
export const SMS_ROUNDS = { id: 'dgwQueueSmsRounds', path: 'dgw-sms-rounds' };
const ROUNDS = 10;
const ROUND_SIZE = 5;
const ITEMS_PER_EXECUTION = 200;
const MAX_REJECTED_SHARE = 0.1;

export type Item = { phone?: string; isFlagged?: unknown; error?: unknown; [key: string]: unknown };

export async function postJson(url: string, body: unknown, options: { timeoutMs?: number } = {}): Promise<{ status: number; body: unknown }> {
	const signal = options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined;
	const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
	const text = await response.text();
	let parsed: unknown = text;
	try {
		parsed = JSON.parse(text);
	} catch {
		// Left as text for the assertion message.
	}
	return { status: response.status, body: parsed };
}

/** Which worker started each new execution since `before` (log offsets per worker). */
function newStartsPerWorker(harness: QueueHarness, before: number[]): string[][] {
	return harness.cluster.workers.map((worker, index) => startedOn(worker.log().slice(before[index])));
}

export async function lookupBatchOnWorker(harness: QueueHarness, emulator: Emulator) {
	const { webhook, main, workers } = harness.cluster;
	const before = workers.map((worker) => worker.log().length);
	emulator.resetLedger();
	const phones = [{ phone: '13800138000' }, { phone: '13900139000' }, { phone: '13800138000' }, { phone: '13700137000' }];
	const answer = await postJson(`${webhook.url}/webhook/${LOOKUPS_A.path}`, { phones });
	assert.equal(answer.status, 200, `lookup batch answered ${answer.status}: ${JSON.stringify(answer.body)}`);
	const items = answer.body as Item[];
	assert.equal(items.length, 4, `one output item per input item: ${JSON.stringify(items)}`);
	assert.deepEqual(
		items.map((item) => item.error),
		[undefined, undefined, undefined, undefined],
		`no failed items: ${JSON.stringify(items)}`,
	);
	assert.ok(items.every((item) => typeof item.isFlagged === 'boolean'), `simplified output carries isFlagged: ${JSON.stringify(items)}`);
	assert.equal(emulator.ledger().byPath['/telecom/identify']?.calls, 3, 'three distinct numbers, three paid calls');

	const [execution] = await until(async () => {
		const list = await harness.executions(LOOKUPS_A.id);
		return list.length === 1 && list[0].status === 'success' && list;
	}, 'the lookup execution to be recorded as a success');
	const starts = newStartsPerWorker(harness, before);
	assert.deepEqual(starts.flat(), [execution.id], `execution ${execution.id} started on a worker, per worker: ${JSON.stringify(starts)}`);
	assert.doesNotMatch(main.log(), /Worker started execution/, 'main ran no execution itself');
	log(`1. lookup batch ran on worker ${starts.findIndex((ids) => ids.length > 0) + 1} (execution ${execution.id}): 4 items, 3 paid calls`);
}

export async function twoWorkersShareTheRate(harness: QueueHarness, emulator: Emulator) {
	const { webhook, workers } = harness.cluster;
	const before = workers.map((worker) => worker.log().length);
	emulator.resetLedger();
	emulator.setFaults({ rateCapPerSecond: GATEWAY_CAP_PER_SECOND });
	try {
		const started = Date.now();
		const answers = await Promise.all([
			postJson(`${webhook.url}/webhook/${LOOKUPS_A.path}`, { phones: distinctPhones('139', ITEMS_PER_EXECUTION) }),
			postJson(`${webhook.url}/webhook/${LOOKUPS_B.path}`, { phones: distinctPhones('138', ITEMS_PER_EXECUTION) }),
		]);
		const seconds = (Date.now() - started) / 1000;
		for (const answer of answers) {
			assert.equal(answer.status, 200, `batch answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
			const items = answer.body as Item[];
			assert.equal(items.length, ITEMS_PER_EXECUTION, 'one output item per number');
			const failed = items.filter((item) => item.error !== undefined);
			assert.equal(failed.length, 0, `no failed items, got ${failed.length}: ${JSON.stringify(failed.slice(0, 3))}`);
		}
		const totals = emulator.ledger().byPath['/telecom/identify'];
		assert.ok(totals, 'the gateway saw the lookups');
		const starts = newStartsPerWorker(harness, before);
		assert.deepEqual(
			starts.map((ids) => ids.length),
			workers.map(() => 1),
			`one execution per worker: ${JSON.stringify(starts)}`,
		);
		if (process.env.QUEUE_DEBUG) {
			const calls = emulator.ledger().calls.filter((call) => call.path === '/telecom/identify');
			const first = calls[0]?.at ?? 0;
			console.log(calls.map((call) => `${call.at - first}${call.kind === 'rejected429' ? '!' : ''}`).join(' '));
		}
		const ideal = (2 * ITEMS_PER_EXECUTION) / GATEWAY_CAP_PER_SECOND;
		const rejectedShare = totals.rejected429 / totals.calls;
		const callTimes = emulator.ledger().calls.filter((call) => call.path === '/telecom/identify').map((call) => call.at);
		const callSpan = (Math.max(...callTimes) - Math.min(...callTimes)) / 1000;
		log(
			`2. 2 × ${ITEMS_PER_EXECUTION} lookups on 2 workers: ${seconds.toFixed(1)} s end to end (ideal ${ideal} s; first to last gateway call ${callSpan.toFixed(1)} s), ${totals.calls} calls, ${totals.rejected429} rejected with 429 (${(rejectedShare * 100).toFixed(1)} %)`,
		);
		assert.equal(totals.calls - totals.rejected429, 2 * ITEMS_PER_EXECUTION, 'each number answered once');
		assert.ok(rejectedShare <= MAX_REJECTED_SHARE, `429 share ${(rejectedShare * 100).toFixed(1)} % is above ${MAX_REJECTED_SHARE * 100} %`);
		// The time is reported, not asserted: a busy machine must not fail the suite (bench/queueMode.ts measures it).
	} finally {
		emulator.clearFaults();
	}
}

export const report = (id: string) => ({
	action: 'report',
	sms: { id, phone: 13900000001, content: '【数据网关】您的验证码是1234', sendDate: '2026-11-22 10:00:00', receiveDate: '2026-11-22 10:00:05', status: 1, message: '' },
});

export async function oneCallbackOneStart(harness: QueueHarness) {
	const { webhook, main } = harness.cluster;
	const first = await postJson(`${webhook.url}/${triggerPath}`, report('QUEUE-T1'));
	assert.deepEqual(first.body, { received: true, started: true }, 'the webhook process starts the workflow');
	const again = await postJson(`${main.url}/${triggerPath}`, report('QUEUE-T1'));
	assert.deepEqual(again.body, { received: true, started: false, reason: 'duplicate' }, 'main knows the event from the static data');
	const againOnWebhook = await postJson(`${webhook.url}/${triggerPath}`, report('QUEUE-T1'));
	assert.deepEqual(againOnWebhook.body, { received: true, started: false, reason: 'duplicate' }, 'and so does the webhook process');
	const other = await postJson(`${main.url}/${triggerPath}`, report('QUEUE-T2'));
	assert.deepEqual(other.body, { received: true, started: true }, 'another event still starts it');

	const executions = await until(async () => {
		const list = await harness.executions(TRIGGER_ID);
		return list.length >= 2 && list.every((execution) => execution.status === 'success') && list;
	}, 'the two trigger executions to finish');
	assert.equal(executions.length, 2, `four callbacks of two events started two executions: ${JSON.stringify(executions)}`);
	log('3. one callback to the webhook process and again to main (and again to the webhook process) started one execution');
}

/** Texts the emulator accepted on /sms/send (billed on delivery), not counting refusals or delivery reports. */
export function acceptedSends(emulator: Emulator): number {
	return emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call' && call.code === 0).length;
}

/** Accepted texts per number and message (the template variables) since the ledger was reset. */
function textsPerNumber(emulator: Emulator): Map<string, string[]> {
	const texts = new Map<string, string[]>();
	for (const call of emulator.ledger().calls) {
		if (call.path !== '/sms/send' || call.kind !== 'call' || call.code !== 0 || !call.phone) continue;
		texts.set(call.phone, [...(texts.get(call.phone) ?? []), call.params ?? '']);
	}
	return texts;
}

export async function sameBatchOnBothWorkersSendsOnce(harness: QueueHarness, emulator: Emulator) {
	const { webhook, workers } = harness.cluster;
	// The gateway's own per-number limits are not under test; the node's are.
	emulator.configure({ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });
	emulator.resetLedger();
	const finished = async (count: number) =>
		await until(async () => {
			const list = await harness.executions(SMS_ROUNDS.id);
			return list.length >= count && list.every((execution) => execution.status !== 'running' && execution.status !== 'new') && list;
		}, `${count} SMS round executions to finish`);
	const racers: number[] = [];
	for (let round = 1; round <= ROUNDS; round++) {
		// Fresh numbers each round, so the node's 2 a minute is what a leaked count would hit.
		const phones = Array.from({ length: ROUND_SIZE }, (_, index) => `137${String(round).padStart(2, '0')}${String(index).padStart(6, '0')}`);
		const before = workers.map((worker) => worker.log().length);
		const batch = { phones: phones.map((phone) => ({ phone, code: `1${String(round).padStart(3, '0')}` })) };
		const answers = await Promise.all([postJson(`${webhook.url}/webhook/${SMS_ROUNDS.path}`, batch), postJson(`${webhook.url}/webhook/${SMS_ROUNDS.path}`, batch)]);
		assert.ok(answers.every((answer) => answer.status === 200), `both posts started the workflow: ${JSON.stringify(answers)}`);
		const raced = await finished(3 * round - 1);
		const starts = newStartsPerWorker(harness, before);
		racers.push(starts.filter((ids) => ids.length > 0).length);
		assert.ok(raced.every((execution) => execution.status === 'success'), `round ${round}: the executions succeeded: ${JSON.stringify(raced.slice(0, 4))}`);

		const next = await postJson(`${webhook.url}/webhook/${SMS_ROUNDS.path}`, { phones: phones.map((phone) => ({ phone, code: `2${String(round).padStart(3, '0')}` })) });
		assert.equal(next.status, 200, `the follow-up started: ${JSON.stringify(next.body)}`);
		const all = await finished(3 * round);
		assert.ok(all.every((execution) => execution.status === 'success'), `round ${round}: the follow-up succeeded: ${JSON.stringify(all.slice(0, 4))}`);

		const texts = textsPerNumber(emulator);
		for (const phone of phones) {
			const got = texts.get(phone) ?? [];
			assert.equal(got.filter((params) => params.includes(`"1${String(round).padStart(3, '0')}"`)).length, 1, `round ${round}: ${phone} got the batch's message once: ${JSON.stringify(got)}`);
			assert.equal(got.filter((params) => params.includes(`"2${String(round).padStart(3, '0')}"`)).length, 1, `round ${round}: ${phone} got the follow-up once, not refused: ${JSON.stringify(got)}`);
		}
	}
	const acceptedTotal = acceptedSends(emulator);
	assert.equal(acceptedTotal, ROUNDS * ROUND_SIZE * 2, `${ROUNDS} rounds × ${ROUND_SIZE} numbers × 2 messages, each texted once`);
	const onBoth = racers.filter((workersUsed) => workersUsed === 2).length;
	assert.ok(onBoth >= ROUNDS / 2, `the two executions of a round ran on both workers in ${onBoth} of ${ROUNDS} rounds: ${JSON.stringify(racers)}`);
	log(
		`4. ${ROUNDS} rounds of one ${ROUND_SIZE}-message batch posted twice at once (on both workers in ${onBoth} rounds): each number texted once per round, and the different message after it sent (${acceptedTotal} texts in all)`,
	);
}

export async function retryOnTheOtherWorkerSendsOnce(harness: QueueHarness, emulator: Emulator) {
	const { webhook, main, workers } = harness.cluster;
	const [first, second] = ['13911110001', '13911110002'];
	// The gateway allows one text a minute per number; the second number has had its text already.
	emulator.configure({ smsLimits: { ...emulator.config().smsLimits, perMinute: 1 } });
	const primer = await fetch(`${emulator.url}/sms/send?${new URLSearchParams({ appCode: emulator.demo.memberAppCode, signId: emulator.demo.signatureId, templateId: emulator.demo.templateWithoutVariablesId, phone: second })}`);
	assert.equal(((await primer.json()) as { code: number }).code, 0, 'the primer text went out');
	emulator.resetLedger();
	const before = workers.map((worker) => worker.log().length);

	const answer = await postJson(`${webhook.url}/webhook/${SMS.path}`, { phones: [{ phone: first }, { phone: second }] });
	assert.equal(answer.status, 200, `the SMS workflow started: ${JSON.stringify(answer.body)}`);
	const [failed] = await until(async () => {
		const list = await harness.executions(SMS.id);
		return list.length === 1 && list[0].status === 'error' && list;
	}, 'the SMS execution to fail on the refused second number');
	assert.equal(acceptedSends(emulator), 1, 'the first number was texted, the second refused');
	const ranOn = newStartsPerWorker(harness, before).findIndex((ids) => ids.includes(failed.id));
	assert.ok(ranOn >= 0, `execution ${failed.id} ran on a worker`);

	// That worker goes away; the retry can only run on the other one.
	await workers[ranOn].stop();
	const other = workers[1 - ranOn];
	const otherBefore = other.log().length;
	emulator.configure({ smsLimits: { ...emulator.config().smsLimits, perMinute: 100 } });
	const retry = await fetch(`${main.url}/rest/executions/${failed.id}/retry`, {
		method: 'POST',
		headers: { cookie: harness.cookie, 'content-type': 'application/json' },
		body: JSON.stringify({ loadWorkflow: false }),
	});
	assert.ok(retry.ok, `retry answered ${retry.status}: ${await retry.clone().text()}`);
	const retried = await until(async () => {
		const list = await harness.executions(SMS.id);
		const done = list.find((execution) => execution.id !== failed.id && execution.status !== 'running' && execution.status !== 'new');
		return done;
	}, 'the retried execution to finish');
	assert.equal(retried.status, 'success', `the retry succeeded: ${JSON.stringify(retried)}`);
	assert.deepEqual(startedOn(other.log().slice(otherBefore)), [retried.id], `the retry ${retried.id} ran on the other worker`);
	assert.equal(acceptedSends(emulator), 2, 'the retry texted only the second number; the first was not texted again');
	log(`5. SMS execution ${failed.id} failed on worker ${ranOn + 1}; its retry ${retried.id} on worker ${2 - ranOn} texted only the number not yet texted`);
}
