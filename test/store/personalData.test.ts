/**
 * Personal data at rest (issue 33 item 4): after a batch of sends and lookups through the real nodes
 * against the emulator, every byte of the store (the SQLite file with its WAL, every Redis key and
 * value) is searched for the batch's phone numbers, plates, keywords and message texts; the
 * file is owner-only; and after the records expire and one sweep, the file's bytes hold none of them.
 */
import '../harness/n8nEnv';
import '../harness/freshStore';

import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { hostClock } from '../../nodes/shared/store/hostClock';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
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

let redis: RunningRedis;
useRedis((started) => (redis = started));
const realClock = hostClock.now;
afterEach(() => {
	hostClock.now = realClock;
});

/** What the batch puts in: each must be absent from the store, unless listed in docs/personal-data.md. */
const phones = ['13712340001', '13712340002', '13712340003'];
const asked = '13712349999';
const plates = ['京A73901', '沪B73902'];
const keyword = '隐私审计科技有限公司';
const messageText = 'PD7391';
const searched = [...phones, asked, ...plates, keyword, messageText];

function execute(type: INodeType, parameters: INodeParameters, items: IDataObject[], credential: IDataObject = {}) {
	return runWorkflow({
		steps: [{ name: 'Node', type, parameters }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, ...credential } },
	});
}

/** Sends to three numbers (a variable holding the message text), a telephone check, plates' violations and a company, each with what it keeps between runs. */
async function runBatch(credential: IDataObject = {}, reuseHours = 0) {
	const reuse = reuseHours ? { reuseAnswersHours: reuseHours } : {};
	const sms = { ...sendParameters(emulator, { variables: { variable: [{ name: 'code', value: messageText }] } }) };
	const runs = [
		await runWorkflow({
			steps: [{ name: 'SMS', type: new DataGatewaySms(), parameters: sms }],
			items: phones.map((phone) => ({ phone })),
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, ...credential } },
		}),
		await execute(new DataGatewayTelephone(), { phoneNumber: '={{ $json.phone }}', options: { onlyWhenChanged: true, ...reuse } }, [{ phone: asked }], credential),
		await execute(new DataGatewayVehicle(), { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', options: { onlyNewViolations: true, ...reuse } }, plates.map((plate) => ({ plate })), credential),
		await execute(new DataGatewayEnterprise(), { resource: 'registration', operation: 'get', keyword, options: { onlyWhenChanged: true, ...reuse } }, [{}], credential),
	];
	for (const run of runs) expect(run.error).toBeUndefined();
	expect(emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.code === 0)).toHaveLength(3);
}

/** Every place in `bytes` where a searched text occurs (UTF-8, as SQLite and Redis keep text). */
function hitsIn(where: string, bytes: Buffer): string[] {
	return searched.filter((text) => bytes.includes(Buffer.from(text, 'utf8'))).map((text) => `${text} in ${where}`);
}

const storeFile = () => process.env.DATA_GATEWAY_STORE_FILE as string;
/** The file's and its WAL's bytes; the WAL may be gone, or go between a look and a read (SQLite deletes it when the last connection closes). */
function fileBytes(file: string): Array<[string, Buffer]> {
	return [file, `${file}-wal`].flatMap((path): Array<[string, Buffer]> => {
		try {
			return [[path.slice(path.lastIndexOf('.')), readFileSync(path)]];
		} catch (error) {
			if (path !== file && (error as NodeJS.ErrnoException).code === 'ENOENT') return [];
			throw error;
		}
	});
}

/** Each row's value, parsed where it is JSON. */
function rowValues(file: string): unknown[] {
	const database = new (nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>).DatabaseSync(file);
	// The store's own connections (a sweep, a checkpoint on its thread) may hold the file's lock a moment.
	database.exec('PRAGMA busy_timeout = 5000');
	try {
		const rows = (database.prepare('SELECT value FROM store_entries') as unknown as { all(): Array<{ value: string }> }).all();
		return rows.map(({ value }) => {
			try {
				return JSON.parse(value) as unknown;
			} catch {
				return value;
			}
		});
	} finally {
		database.close();
	}
}

function redisCli(...args: string[]): string {
	return execFileSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' });
}

/** Every key and value in the Redis, as text. */
function redisDump(): Buffer {
	const keys = redisCli('--scan').trim().split('\n').filter(Boolean);
	expect(keys.length).toBeGreaterThan(0);
	const parts = keys.map((key) => {
		const type = redisCli('TYPE', key).trim();
		return `${key}=${type === 'set' ? redisCli('SMEMBERS', key) : redisCli('GET', key)}`;
	});
	return Buffer.from(parts.join('\n'), 'utf8');
}

describe('personal data in the store', () => {
	// The send records list the count keys they took by tag (keyName.ts valueTag): a count key holds the number.
	it('the SQLite file, its WAL and Redis hold no phone number, plate, keyword or message text', async () => {
		await runBatch();
		const hits = fileBytes(storeFile()).flatMap(([name, bytes]) => hitsIn(`the file's ${name}`, bytes));
		// The gateway forgets the first batch (its limit of 1 SMS a minute per number); Redis has seen none of it.
		emulator.reset();
		emulator.configure(untilFinished);
		await runBatch({ sharedLimitRedisUrl: redis.url });
		hits.push(...hitsIn('Redis', redisDump()));
		expect(hits).toEqual([]);
	});

	it('with Reuse Answers For, no row holds them except kept answers (listed in README)', async () => {
		await runBatch({}, 24);
		const keptAnswers = (value: unknown) => typeof value === 'object' && value !== null && 'answeredAt' in value && 'data' in value;
		const values = rowValues(storeFile());
		expect(values.filter(keptAnswers).length).toBeGreaterThan(0);
		const hits = values.filter((value) => !keptAnswers(value)).flatMap((value) => hitsIn('a row', Buffer.from(JSON.stringify(value), 'utf8')));
		expect(hits).toEqual([]);
	});

	it('the file and its folder are owner-only (600, 700), the WAL and shared-memory files too', async () => {
		await runBatch();
		const file = storeFile();
		for (const path of [file, `${file}-wal`, `${file}-shm`]) expect([path.slice(-4), statSync(path).mode & 0o777]).toEqual([path.slice(-4), 0o600]);
		// The harness's folder was made by the test (mkdtemp makes 700); a folder the store makes is 700 too (sqliteStore.test.ts).
		expect(statSync(dirname(file)).mode & 0o077).toBe(0);
	});

	it('after every record expired and one sweep, the file\'s bytes hold none of them', async () => {
		await runBatch({}, 24);
		expect(fileBytes(storeFile()).flatMap(([name, bytes]) => hitsIn(name, bytes)).length).toBeGreaterThan(0);
		// Past the longest lifetime (what Only New has seen: 90 days).
		const later = realClock() + 91 * 24 * HOUR;
		hostClock.now = () => later;
		forgetOpenStores();
		const store = new SqliteDurableStore(nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>, storeFile());
		try {
			const pass = await store.sweepNow();
			expect(pass.removed).toBeGreaterThan(0);
		} finally {
			store.close();
		}
		expect(fileBytes(storeFile()).flatMap(([name, bytes]) => hitsIn(name, bytes))).toEqual([]);
	});
});
