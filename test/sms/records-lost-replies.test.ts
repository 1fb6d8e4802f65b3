/**
 * Issue 44: the credential's Shared Redis behind a proxy of this test's own that drops the
 * connection at the N-th script (EVAL or EVALSHA: the reserve, the joint claim, the shared rate
 * limit's turn of each send, the mark as sent) of a batch of 5 distinct messages, for every
 * position, 3 times each: the script relayed to Redis first (Redis runs it, its reply is lost) or
 * not, and the connection back at once or Redis unreachable until the run ends. Then the batch
 * again, as a new execution. Each number is texted exactly once (the emulator's ledger), the items
 * the first run's error names as already sent were, and no item of the second run is skipped as a
 * repeat of a message that was never sent. The 'unreachable' cases fail on the code before issue 44.
 */
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { closeAllRedis } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { startRedisProxy, type RedisProxy } from '../harness/redisProxy';
import { codeVariable, sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

jest.setTimeout(600_000);

let emulator: Emulator;
useEmulator((started) => (emulator = started), { deliveryDelayMs: 60_000 }, { smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });

let redis: RunningRedis;
let proxy: RedisProxy;
beforeAll(async () => {
	redis = await startRedis(() => undefined);
	proxy = await startRedisProxy(redis.port);
});
afterAll(async () => {
	closeAllRedis();
	await proxy?.close();
	await redis?.stop();
});

const sms = new DataGatewaySms();
let batches = 0;
const TRIES_PER_POSITION = 3;

async function runBatch(phones: string[]) {
	const result = await runWorkflow({
		steps: [{ name: 'SMS', type: sms, parameters: sendParameters(emulator, { variables: codeVariable('4321') }) }],
		items: phones.map((phone) => ({ phone })),
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, sharedLimitRedisUrl: proxy.url, maxRetries: 0 } },
	});
	return { outputs: result.json(), error: result.error };
}

/** Texts the gateway took, by number. */
function textsTo(phones: string[]): Map<string, number> {
	const texts = new Map(phones.map((phone) => [phone, 0]));
	for (const call of emulator.ledger().calls) if (call.path === '/sms/send' && call.kind === 'call' && call.code === 0 && texts.has(String(call.phone))) texts.set(String(call.phone), (texts.get(String(call.phone)) ?? 0) + 1);
	return texts;
}

/** Five numbers never used before in this file. */
const freshPhones = () => {
	batches++;
	return Array.from({ length: 5 }, (_, index) => `139${String(batches).padStart(4, '0')}${String(index).padStart(4, '0')}`);
};

const MODES = [
	{ applied: true, staysDown: false },
	{ applied: false, staysDown: false },
	{ applied: true, staysDown: true },
	{ applied: false, staysDown: true },
];

describe('the Shared Redis connection dropped at each script of a batch of 5 (issue 44)', () => {
	it.each(MODES)('every position (script relayed first: $applied; Redis unreachable until the run ends: $staysDown): each number texted once, nothing skipped as a repeat of a message never sent', async ({ applied, staysDown }) => {
		// Once for Redis to learn the scripts (EVALSHA, then EVAL), once to count them.
		expect((await runBatch(freshPhones())).error).toBeUndefined();
		const before = proxy.scripts();
		expect((await runBatch(freshPhones())).error).toBeUndefined();
		const scripts = proxy.scripts() - before;
		// The reserve, the joint claim, the rate limit's turn of each send, the mark as sent.
		expect(scripts).toBeGreaterThanOrEqual(3);

		for (let position = 1; position <= scripts; position++) {
			for (let time = 0; time < TRIES_PER_POSITION; time++) {
				const phones = freshPhones();
				const drops = proxy.up();
				proxy.dropAt(position, applied, staysDown);
				const faulty = await runBatch(phones);
				expect({ position, time, dropped: proxy.up() - drops }).toEqual({ position, time, dropped: 1 });
				const afterFirst = textsTo(phones);
				// What the stopping error names as already sent went out.
				const named = [...(faulty.error?.message.match(/\[already sent[^\]]*\]/)?.[0] ?? '').matchAll(/item (\d+) \(task/g)].map((match) => phones[Number(match[1]) - 1]);
				expect({ position, time, named: named.map((phone) => afterFirst.get(phone)) }).toEqual({ position, time, named: named.map(() => 1) });
				const again = await runBatch(phones);
				const where = { position, time, error: faulty.error?.message, description: faulty.error?.description, again: again.error?.message };
				// Each number texted exactly once, across both runs, and the second run ends well.
				expect({ ...where, texts: [...textsTo(phones).values()], againFailed: again.error !== undefined }).toEqual({ ...where, texts: [1, 1, 1, 1, 1], againFailed: false });
				// A repeat in the second run only of a message that went out in the first.
				again.outputs.forEach((output, index) => {
					if (output.skippedAsRepeat === true) expect({ ...where, index, sentBefore: afterFirst.get(phones[index]) }).toEqual({ ...where, index, sentBefore: 1 });
				});
			}
		}
	});
});
