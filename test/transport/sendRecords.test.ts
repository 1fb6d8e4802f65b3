/**
 * The SMS send records (store/sendRecords/) on every durable store at hand, two deciders racing on
 * the same batch as two n8n processes would (each on its own connection where the store has
 * connections): each message goes out once, counts equal sends. Then whole workflows (n8n-core):
 * two executions of the same node sending the same message at once send it once.
 */
import type { IDataObject } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { SendRecords, type RecordedSend } from '../../nodes/shared/store/sendRecords/sendRecords';
import type { SmsLimits } from '../../nodes/shared/store/sendRecords/rules';
import { closeAllRedis } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { recordStores } from '../harness/recordStores';
import { codeVariable, sendParameters } from '../harness/sms';
import { processedData, runWorkflow } from '../harness/workflow';

jest.setTimeout(120_000);

let redis: RunningRedis;
beforeAll(async () => {
	redis = await startRedis(() => undefined);
});
afterAll(async () => {
	closeAllRedis();
	await redis?.stop();
});

const T0 = Date.parse('2026-11-22T02:30:30.000Z');

const batchOf = (round: number, message = (phone: string) => `message to ${phone}`): RecordedSend[] =>
	Array.from({ length: 5 }, (_, itemIndex) => {
		const phone = `139${String(round).padStart(4, '0')}${String(itemIndex).padStart(4, '0')}`;
		return { itemIndex, phone, message: message(phone) };
	});

/** One node run that reserves, then claims every item it may send: the items it really sends. */
async function sendBatch(store: DurableStore, execution: string, limits: SmsLimits, sends: RecordedSend[]): Promise<number[]> {
	const records = new SendRecords(store, { node: 'workflow 1|node 1', execution, runIndex: 0 }, { limits, repeatWindowMinutes: 10 });
	const decisions = await records.reserve(sends);
	const going: number[] = [];
	for (const [itemIndex, decision] of decisions) if (decision.kind === 'send' && (await records.claim(itemIndex)) === 'go') going.push(itemIndex);
	await records.markSent(new Map(going.map((itemIndex) => [itemIndex, `task ${execution} ${itemIndex}`])));
	return going;
}

describe.each(recordStores())('send records on the %s store', (_name, open) => {
	it('two processes sending the same batch at the same instant: each message once, the next message goes (10 rounds)', async () => {
		const store = await open(() => T0);
		// With 2 a day, a count that leaked in the race would refuse the different message that follows
		// (the day, as Redis keeps its own clock: a minute may turn within the test, a day hardly).
		const limits = { perMinute: 100, perHour: 100, perDay: 2 };
		for (let round = 1; round <= 10; round++) {
			const [a, b] = await Promise.all([sendBatch(store.process(), `A${round}`, limits, batchOf(round)), sendBatch(store.process(), `B${round}`, limits, batchOf(round))]);
			expect([...a, ...b].sort()).toEqual([0, 1, 2, 3, 4]);
			const follow = await sendBatch(store.process(), `C${round}`, limits, batchOf(round, (phone) => `another message to ${phone}`));
			expect(follow).toEqual([0, 1, 2, 3, 4]);
			// A third message to the same numbers in the same day is refused: each count is exactly 2.
			expect(await sendBatch(store.process(), `D${round}`, limits, batchOf(round, (phone) => `a third message to ${phone}`))).toEqual([]);
		}
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
		['the store n8n offers without Redis', () => ({})],
	])('with the records in %s: one send, the other skipped as a repeat', async (store, credential) => {
		const outputs = await runTwice(credential());
		expect(outputs.map((output) => output.sent === false).sort()).toEqual([false, true]);
		expect(accepted()).toBe(1);
		// The records are in the durable store; n8n's processed-data rows are no longer used.
		expect([...processedData.records.values()].flat()).toEqual([]);
		void store;
	});
});
