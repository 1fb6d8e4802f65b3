/**
 * Erasing one phone number (issue 33 item 4): after sends to two numbers (send, message and count
 * records, delivery records) and telephone lookups of both with Reuse Answers For and Only When
 * Changed, erasePhoneEverywhere(number) leaves nothing written about that number in the SQLite
 * file's bytes, in Redis or in process memory, keeps everything about the other number, and takes
 * the guards with it: a following send of the same message to the erased number is not a repeat.
 */
import '../harness/n8nEnv';
import '../harness/freshStore';

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { IDataObject } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { keepAnswer } from '../../nodes/shared/lookups/reuse';
import { takeNews } from '../../nodes/shared/lookups/onlyNew';
import { erasePhone, erasePhoneEverywhere } from '../../nodes/shared/store/erasePhone';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { NAME_PREFIX, phoneTag } from '../../nodes/shared/store/keyName';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { SendRecords } from '../../nodes/shared/store/sendRecords/sendRecords';
import { readSends, recordSends } from '../../nodes/shared/store/sendsByTask';
import { forgetOpenStores } from '../../nodes/shared/testing';
import type { RunningRedis } from '../../scripts/n8n-runtime/queue';
import { useRedis } from '../harness/redis';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

jest.setTimeout(120_000);

const HOUR = 3_600_000;
let emulator: Emulator;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
useEmulator((started) => (emulator = started), untilFinished, untilFinished);

const erased = '13712345001';
const kept = '13712345002';

function run(type: DataGatewaySms | DataGatewayTelephone, parameters: IDataObject, phones: string[], credential: IDataObject) {
	return runWorkflow({
		steps: [{ name: 'Node', type, parameters: parameters as never }],
		items: phones.map((phone) => ({ phone })),
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...credential } },
	});
}
const sendBoth = async (credential: IDataObject) => await run(new DataGatewaySms(), sendParameters(emulator, { sendOptions: { reference: 'order 1' } }), [erased, kept], credential);
const lookUpBoth = async (credential: IDataObject) =>
	await run(new DataGatewayTelephone(), { phoneNumber: '={{ $json.phone }}', options: { onlyWhenChanged: true, reuseAnswersHours: 24 } }, [erased, kept], credential);

/** Sends to both numbers and looks both up, each with what it keeps between runs. */
async function keepBoth(credential: IDataObject = {}) {
	for (const step of [sendBoth, lookUpBoth]) expect((await step(credential)).error).toBeUndefined();
	expect(emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.code === 0)).toHaveLength(2);
}

/** After the erase: the same message to both numbers (the gateway's own per-minute limit forgotten), and both looked up again. */
async function sendAndLookUpAgain(credential: IDataObject = {}) {
	emulator.reset();
	emulator.configure(untilFinished);
	const sent = await sendBoth(credential);
	expect(sent.error).toBeUndefined();
	// The erased number's guards went with it; the other's repeat window still holds.
	expect(sent.json().map((item) => [item.phone, item.sent === false, typeof item.taskId])).toEqual([
		[erased, false, 'string'],
		[kept, true, 'object'],
	]);
	const looked = await lookUpBoth(credential);
	expect(looked.error).toBeUndefined();
	// Only the erased number is asked again (its kept answer went) and output (Only When Changed forgot it); the other is reused, unchanged.
	expect(emulator.ledger().calls.filter((call) => call.path === '/telecom/identify').length).toBe(1);
	expect(looked.json().map((item) => item.reused)).toEqual([false]);
}

const storeFile = () => process.env.DATA_GATEWAY_STORE_FILE as string;
const fileBytes = () => Buffer.concat([storeFile(), `${storeFile()}-wal`].filter(existsSync).map((path) => readFileSync(path)));

/** The file's rows written about a number (their names and values), read with a connection of its own. */
function rowsAbout(phone: string): Array<{ key: string; value: string }> {
	const database = new (nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>).DatabaseSync(storeFile());
	try {
		// The store's own connections (a sweep, a checkpoint on its thread) may hold the file's lock a moment.
		database.exec('PRAGMA busy_timeout = 5000');
		return (database.prepare('SELECT key, value FROM store_entries WHERE phone_tag = ?') as unknown as { all(tag: string): Array<{ key: string; value: string }> }).all(phoneTag(phone));
	} finally {
		database.close();
	}
}
const SMS_AND_DELIVERY_ROWS = 1 + 1 + 3 + 1; // send record, message record, minute/hour/day counts, delivery record

describe('erasing one phone number', () => {
	it('in the SQLite file: every row about it goes, its bytes leave the file, the other number keeps its rows, and its next send is no repeat', async () => {
		await keepBoth();
		const before = rowsAbout(erased);
		// The SMS records and the delivery record, the kept answer and what Only When Changed output.
		expect(before).toHaveLength(SMS_AND_DELIVERY_ROWS + 2);
		const others = rowsAbout(kept);
		expect(others).toHaveLength(before.length);

		forgetOpenStores();
		expect(await erasePhoneEverywhere(`+86 ${erased}`)).toEqual([{ store: expect.stringContaining('SQLite') as string, erased: before.length }]);

		expect(rowsAbout(erased)).toEqual([]);
		expect(rowsAbout(kept)).toEqual(others);
		const bytes = fileBytes();
		// Row names are keyed hashes (unique to the row); values of a few characters (a count's "1") are not telling.
		const telling = (rows: typeof before) => rows.flatMap(({ key, value }) => [key, ...(value.length > 20 ? [value] : [])]);
		expect(telling(before).filter((text) => bytes.includes(Buffer.from(text, 'utf8')))).toEqual([]);
		expect(telling(others).every((text) => bytes.includes(Buffer.from(text, 'utf8')))).toBe(true);

		await sendAndLookUpAgain();
	});

	describe('in Redis', () => {
		let redis: RunningRedis;
		useRedis((started) => (redis = started));
		const cli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' }).trim();
		const namesAbout = (phone: string) => cli('SMEMBERS', `${NAME_PREFIX}phone.${phoneTag(phone)}`).split('\n').filter(Boolean).sort();

		it('its keys and their tag set go, the other number keeps its keys; the delivery records (the SQLite file) go too; its next send is no repeat', async () => {
			const credential = { sharedLimitRedisUrl: redis.url };
			await keepBoth(credential);
			const before = namesAbout(erased);
			// Send records, kept answer and Only When Changed in the credential's Redis; delivery records in the SQLite file (the trigger's store).
			expect(before).toHaveLength(SMS_AND_DELIVERY_ROWS - 1 + 2);
			const others = namesAbout(kept);
			expect(others).toHaveLength(before.length);
			expect(rowsAbout(erased)).toHaveLength(1);

			forgetOpenStores();
			const done = await erasePhoneEverywhere(erased, [{ url: redis.url }]);
			expect(done.map(({ erased: count }) => count)).toEqual([1, before.length]);

			expect(before.map((name) => cli('EXISTS', name))).toEqual(before.map(() => '0'));
			expect(cli('EXISTS', `${NAME_PREFIX}phone.${phoneTag(erased)}`)).toBe('0');
			expect(namesAbout(kept)).toEqual(others);
			expect(others.map((name) => cli('EXISTS', name))).toEqual(others.map(() => '1'));
			expect(rowsAbout(erased)).toEqual([]);

			await sendAndLookUpAgain(credential);
		});
	});

	it("in the process's memory: every entry about it goes (send records, delivery record, kept answer, what Only When Changed saw), the guards with it", async () => {
		const store = new MemoryStore();
		const tags = () => (JSON.parse(store.dump()) as Array<[string, { phoneTag?: string }]>).map(([, entry]) => entry.phoneTag);
		const limits = { limits: { perMinute: 1, perHour: 5, perDay: 10 }, repeatWindowMinutes: 10 };
		const sends = [erased, kept].map((phone, itemIndex) => ({ itemIndex, phone, message: `message to ${phone}` }));
		const first = new SendRecords(store, { node: 'workflow|node', execution: '1', runIndex: 0 }, limits);
		await first.reserve(sends);
		for (const { itemIndex } of sends) expect(await first.claim(itemIndex)).toBe('go');
		await first.markSent(new Map(sends.map(({ itemIndex }) => [itemIndex, `task-${itemIndex}`])));
		await recordSends(store, 'account', sends.map(({ itemIndex, phone }) => ({ taskId: `task-${itemIndex}`, reference: null, workflowId: 'w', executionId: '1', phone })));
		for (const phone of [erased, kept]) await keepAnswer(store, `question about ${phone}`, { answer: phone }, HOUR, phone);
		await takeNews(store, 'workflow|node', 'changed', new Map([erased, kept].map((phone) => [`question about ${phone}`, ['print']])), { phones: new Map([erased, kept].map((phone) => [`question about ${phone}`, phone])) });
		const count = (phone: string) => tags().filter((tag) => tag === phoneTag(phone)).length;
		expect([count(erased), count(kept)]).toEqual([SMS_AND_DELIVERY_ROWS + 2, SMS_AND_DELIVERY_ROWS + 2]);

		await expect(erasePhone(store, erased)).resolves.toBe(SMS_AND_DELIVERY_ROWS + 2);
		expect([count(erased), count(kept)]).toEqual([0, SMS_AND_DELIVERY_ROWS + 2]);
		expect(store.dump()).not.toContain(erased);
		expect([...(await readSends(store, ['task-0', 'task-1'], 'account')).values()].map((record) => record?.taskId)).toEqual([undefined, 'task-1']);
		const next = new SendRecords(store, { node: 'workflow|node', execution: '2', runIndex: 0 }, limits);
		expect([...(await next.reserve(sends)).values()].map((decision) => decision.kind)).toEqual(['send', 'repeat']);
	});
});
