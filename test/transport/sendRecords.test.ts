/**
 * The SMS send records in Redis (store/sendRecords/redisStore.ts) against a real redis-server: two deciders on
 * their own connections (two processes) racing on the same batch, counts equal to sends, a
 * certainly-failed send giving back exactly what it took, each key with its own expiry, and key
 * names without the number. Then whole workflows (n8n-core) with the store in Redis and in n8n's
 * database: two executions of the same node sending the same message at once send it once.
 */
import type { IDataObject } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { RedisRecordStore } from '../../nodes/shared/store/sendRecords/redisStore';
import { parseRedisUrl, RedisUnavailable, SharedRedis } from '../../nodes/shared/store/redis/connection';
import { SmsSendRecords, type GuardedSend, type SmsLimits } from '../../nodes/shared/store/sendRecords/rules';
import { closeAllRedis } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { codeVariable, sendParameters } from '../harness/sms';
import { processedData, runWorkflow } from '../harness/workflow';

jest.setTimeout(120_000);

let redis: RunningRedis;
const connections: SharedRedis[] = [];
/** A connection of its own, as another n8n process would have. */
function processConnection(): SharedRedis {
	const connection = new SharedRedis(parseRedisUrl(redis.url));
	connections.push(connection);
	return connection;
}
let inspector: SharedRedis;

beforeAll(async () => {
	redis = await startRedis(() => undefined);
	inspector = processConnection();
});
afterAll(async () => {
	for (const connection of connections) connection.close();
	closeAllRedis();
	await redis?.stop();
});
beforeEach(async () => {
	await inspector.command('FLUSHDB', []);
});

const T0 = Date.parse('2026-11-22T02:30:30.000Z');
const NODE = 'workflow 1|node 1';

function records(connection: SharedRedis, executionId: string, limits: SmsLimits | undefined, windowMinutes = 10) {
	return new SmsSendRecords(new RedisRecordStore(connection, NODE, executionId, limits, windowMinutes));
}

const batchOf = (round: number, message = (phone: string) => `message to ${phone}`): GuardedSend[] =>
	Array.from({ length: 5 }, (_, itemIndex) => {
		const phone = `139${String(round).padStart(4, '0')}${String(itemIndex).padStart(4, '0')}`;
		return { itemIndex, phone, message: message(phone) };
	});

async function keys(pattern: string): Promise<string[]> {
	return ((await inspector.command('KEYS', [pattern])) as string[]).sort();
}
async function countTotal(): Promise<number> {
	const counts = await keys('*:c:*');
	const values = await Promise.all(counts.map(async (key) => Number(await inspector.command('GET', [key]))));
	return values.reduce((sum, value) => sum + value, 0);
}
const kinds = (decisions: Map<number, { kind: string }>) => [...decisions.values()].map((decision) => decision.kind);

describe('send records in Redis', () => {
	it('two processes deciding the same batch at the same instant: each message once, counts equal sends, the next message goes (10 rounds)', async () => {
		const [first, second] = [processConnection(), processConnection()];
		// With 2 a minute, a slot that leaked in the race would refuse the different message that follows.
		const limits = { perMinute: 2, perHour: 5, perDay: 10 };
		for (let round = 1; round <= 10; round++) {
			const batch = batchOf(round);
			const [a, b] = await Promise.all([records(first, `A${round}`, limits).reserve(batch, T0), records(second, `B${round}`, limits).reserve(batch, T0)]);
			for (const { itemIndex } of batch) {
				expect([a.get(itemIndex)?.kind, b.get(itemIndex)?.kind].sort()).toEqual(['repeat', 'send']);
			}
			const follow = await records(second, `C${round}`, limits).reserve(batchOf(round, (phone) => `another message to ${phone}`), T0 + 1000);
			expect(kinds(follow)).toEqual(['send', 'send', 'send', 'send', 'send']);
		}
		// 10 rounds × 5 numbers × 2 messages, each counted once in its minute, hour and day.
		expect(await countTotal()).toBe(10 * 5 * 2 * 3);
	});

	it('each send is one message key and three counters, with their own expiry; keys name no number', async () => {
		const connection = processConnection();
		const limits = { perMinute: 1, perHour: 5, perDay: 10 };
		await records(connection, 'E1', limits, 10).reserve([{ itemIndex: 0, phone: '13912345678', message: 'fingerprint-1' }], T0);
		const all = await keys('*');
		expect(all).toHaveLength(4);
		expect(all.join(' ')).not.toMatch(/13912345678/);
		const ttl = async (part: string) => Number(await inspector.command('PTTL', [all.find((key) => key.includes(part)) as string]));
		expect(await ttl(':m:')).toBeGreaterThan(9 * 60_000);
		expect(await ttl(':m:')).toBeLessThanOrEqual(10 * 60_000);
		// T0 is 30 s into its minute: the minute counter lasts its 30 s and a minute's grace, the hour's past its end.
		expect(await ttl(':minute:')).toBeLessThanOrEqual(90_000);
		expect(await ttl(':hour:')).toBeLessThanOrEqual(30.5 * 60_000 + 60_000);
		expect(await ttl(':day:')).toBeGreaterThan(await ttl(':hour:'));
	});

	it('the repeat window: another execution is a repeat, the same execution (a loop) sends again, 0 keeps no message', async () => {
		const connection = processConnection();
		const send = { itemIndex: 0, phone: '13900000001', message: 'same' };
		expect(kinds(await records(connection, 'E1', undefined).reserve([send], T0))).toEqual(['send']);
		expect(kinds(await records(connection, 'E2', undefined).reserve([send], T0 + 60_000))).toEqual(['repeat']);
		expect(kinds(await records(connection, 'E1', undefined).reserve([send], T0 + 60_000))).toEqual(['send']);
		await inspector.command('FLUSHDB', []);
		await records(connection, 'E1', undefined, 0).reserve([send], T0);
		expect(await keys('*')).toEqual([]);
	});

	it('items of one run take the counts in item order; the one over the limit is refused and changes nothing', async () => {
		const connection = processConnection();
		const run = records(connection, 'E1', { perMinute: 2, perHour: 5, perDay: 10 }, 0);
		const decisions = await run.reserve([0, 1, 2].map((itemIndex) => ({ itemIndex, phone: '13900000002', message: `m${itemIndex}` })), T0);
		expect(kinds(decisions)).toEqual(['send', 'send', 'limit']);
		expect(decisions.get(2)).toEqual({ kind: 'limit', problem: 'would be message 3 to 13900000002 in this calendar minute; this node allows 2' });
		expect(await countTotal()).toBe(2 * 3);
	});

	it('a certainly-failed send gives back exactly what it took; a message two items share stays until both let go', async () => {
		const connection = processConnection();
		const limits = { perMinute: 5, perHour: 5, perDay: 10 };
		await records(connection, 'E0', limits).reserve([{ itemIndex: 0, phone: '13900000003', message: 'earlier' }], T0);
		const run = records(connection, 'E1', limits);
		const same = { phone: '13900000003', message: 'twice' };
		expect(kinds(await run.reserve([{ itemIndex: 0, ...same }, { itemIndex: 1, ...same }], T0))).toEqual(['send', 'send']);
		expect(await countTotal()).toBe(3 * 3);
		await run.release([0]);
		expect(await countTotal()).toBe(2 * 3);
		expect(kinds(await records(connection, 'E2', limits).reserve([{ itemIndex: 0, ...same }], T0))).toEqual(['repeat']);
		await run.release([1]);
		expect(await countTotal()).toBe(3);
		expect(kinds(await records(connection, 'E2', limits).reserve([{ itemIndex: 0, ...same }], T0))).toEqual(['send']);
	});

	it('a Redis that does not answer fails the reservation, naming the field', async () => {
		const gone = new SharedRedis(parseRedisUrl('redis://127.0.0.1:1'));
		const failure = await records(gone, 'E1', { perMinute: 1, perHour: 5, perDay: 10 })
			.reserve([{ itemIndex: 0, phone: '13900000004', message: 'x' }], T0)
			.catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(RedisUnavailable);
		expect(String((failure as Error).message)).toMatch(/Shared Redis URL for Limits and Send Records/);
	});
});

describe('two executions of one node sending the same message at once (one n8n process)', () => {
	let emulator: Emulator;
	useEmulator(
		(started) => (emulator = started),
		{ reviewDelayMs: 50, deliveryDelayMs: 100, deliveryFailureShare: 0 },
		{ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } },
	);

	const sms = new DataGatewaySms();
	const parameters = () => sendParameters(emulator, { variables: codeVariable('4321'), sendOptions: { perMinute: 2 } });
	const runTwice = async (credential: IDataObject) => {
		const run = () =>
			runWorkflow({
				steps: [{ name: 'SMS', type: sms, parameters: parameters() }],
				items: [{ phone: '13900007001' }],
				credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...credential } },
			});
		const results = await Promise.all([run(), run()]);
		return results.map((result) => result.json()[0]);
	};
	const accepted = () => emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call' && call.code === 0).length;

	it.each([
		['Redis', () => ({ sharedLimitRedisUrl: redis.url })],
		["n8n's database", () => ({})],
	])('with the records in %s: one send, the other skipped as a repeat', async (store, credential) => {
		const outputs = await runTwice(credential());
		expect(outputs.map((output) => output.skippedAsRepeat).sort()).toEqual([false, true]);
		expect(accepted()).toBe(1);
		const inDatabase = [...processedData.records.values()].flat().length;
		if (store === 'Redis') expect(inDatabase).toBe(0);
		else expect(inDatabase).toBeGreaterThan(0);
	});
});
