/**
 * Issue 41 part A through the real engine: the opt-out list and the budgets belong to the gateway
 * account (gateway/accountScope.ts, store/guardScope.ts), whatever appCode, Base URL spelling,
 * credential or store reaches it; the release before's keys still count; process memory refuses them.
 */
import { writeFileSync } from 'node:fs';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { accountKeyOf } from '../../nodes/shared/gateway/account';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import * as openStore from '../../nodes/shared/store/openStore';
import { optOutKey } from '../../nodes/shared/store/optOutList';
import type { RunningRedis } from '../../scripts/n8n-runtime/queue';
import { useRedis } from '../harness/redis';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

const HOUR = 3_600_000;
let emulator: Emulator;
const untilFinished = { reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 };
useEmulator((started) => (emulator = started), untilFinished, untilFinished);
let redis: RunningRedis;
useRedis((started) => (redis = started));
afterEach(() => jest.restoreAllMocks());

const sms = new DataGatewaySms();
const vehicle = new DataGatewayVehicle();
/** The emulator's URL spelled another way: host in capitals, a trailing slash, localhost for 127.0.0.1. */
const spelled = (how: 'as is' | 'capitals' | 'slash' | 'localhost') => {
	const url = emulator.url;
	if (how === 'capitals') return url.replace('http://127.0.0.1', 'HTTP://127.0.0.1');
	if (how === 'slash') return `${url}/`;
	if (how === 'localhost') return url.replace('127.0.0.1', 'LocalHost');
	return url;
};
interface Credential {
	id?: string;
	appCode?: string;
	baseUrl?: string;
	extra?: IDataObject;
}
function runSms(parameters: INodeParameters, phones: string[], credential: Credential = {}) {
	return runWorkflow({
		// SMS 1.4 refuses an opted-out number with an error (1.5 skips it, leaving.test.ts).
		steps: [{ name: 'SMS', type: sms, parameters, typeVersion: 1.4 }],
		items: phones.map((phone) => ({ phone })),
		credentialId: credential.id,
		credentials: { dataGatewayApi: { appCodeSecret: credential.appCode ?? emulator.demo.appCode, baseUrl: credential.baseUrl ?? emulator.url, ...credential.extra } },
	});
}
const optOut = (operation: string) => ({ resource: 'optOut', operation, phone: '={{ $json.phone }}' });
const sendRequests = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;
const OPTED_OUT = /opt-out list: not sent$/;

describe('the opt-out list follows the account', () => {
	it('survives a rotated appCode and every retyping of the Base URL, on the credential and on another credential of the gateway', async () => {
		expect((await runSms(optOut('add'), ['13900004101'])).error).toBeUndefined();
		const changes: Credential[] = [
			{ appCode: emulator.demo.memberAppCode },
			{ baseUrl: spelled('capitals') },
			{ baseUrl: spelled('slash') },
			{ baseUrl: spelled('localhost'), appCode: emulator.demo.memberAppCode },
			{ id: 'another-credential', baseUrl: spelled('localhost') },
		];
		for (const change of changes) expect((await runSms(sendParameters(emulator), ['13900004101'], change)).error?.message).toMatch(OPTED_OUT);
		expect(sendRequests()).toBe(0);
	});

	it('is shared by credentials with one Account whatever their Base URL, and apart for another Account', async () => {
		const acme = { extra: { account: 'Acme' } };
		expect((await runSms(optOut('add'), ['13900004102'], { ...acme, id: 'acme-1', baseUrl: 'http://127.0.0.2:9/' })).error).toBeUndefined();
		expect((await runSms(sendParameters(emulator), ['13900004102'], { id: 'acme-2', extra: { account: ' ACME ' } })).error?.message).toMatch(OPTED_OUT);
		const other = await runSms(sendParameters(emulator), ['13900004102'], { id: 'shop', extra: { account: 'Shop' } });
		expect(other.error).toBeUndefined();
		expect(sendRequests()).toBe(1);
	});

	it("follows a credential whose Account is set after its numbers were added (its earlier scope is linked)", async () => {
		await runSms(optOut('add'), ['13900004103'], { id: 'later-named' });
		const named = await runSms(sendParameters(emulator), ['13900004103'], { id: 'later-named', extra: { account: 'Named later' } });
		expect(named.error?.message).toMatch(OPTED_OUT);
		const checked = await runSms(optOut('check'), ['13900004103'], { id: 'other', extra: { account: 'named later' } });
		expect(checked.json()).toEqual([{ phone: '13900004103', optedOut: true, optedOutAt: expect.any(String) }]);
	});

	it('honours a number listed by the release before (keyed by Base URL as typed × appCode); a second Add keeps its first time; Remove deletes it', async () => {
		const store = await openStore.openDurableStore({ getNode: () => ({ credentials: {} }) } as never);
		const added = Date.UTC(2026, 0, 2, 3, 4, 5);
		await store.update([optOutKey(accountKeyOf(emulator.url, emulator.demo.appCode), '13900004104')], () => ({
			writes: [{ key: optOutKey(accountKeyOf(emulator.url, emulator.demo.appCode), '13900004104'), value: String(added) }],
			result: undefined,
		}));
		expect((await runSms(sendParameters(emulator), ['13900004104'])).error?.message).toMatch(OPTED_OUT);
		const again = await runSms(optOut('add'), ['13900004104'], { appCode: emulator.demo.memberAppCode });
		expect(again.json()).toEqual([{ phone: '13900004104', optedOut: true, alreadyListed: true, optedOutAt: '2026-01-02T11:04:05+08:00' }]);
		const third = await runSms(optOut('add'), ['13900004104']);
		expect(third.json()[0]).toMatchObject({ alreadyListed: true, optedOutAt: '2026-01-02T11:04:05+08:00' });
		expect((await runSms(optOut('remove'), ['13900004104'])).json()).toEqual([{ phone: '13900004104', optedOut: false, removed: true }]);
		expect((await runSms(sendParameters(emulator), ['13900004104'])).error).toBeUndefined();
	});
});

describe('a Redis added to the credential', () => {
	it("keeps this host's SQLite file's opt-outs and spend in force, and then refuses a credential of the account still on the file", async () => {
		const budget = { dailyBudgetYuan: 1.3 };
		const lookup = (credential: Credential, plate: string) =>
			runWorkflow({
				steps: [{ name: 'Detail', type: vehicle, parameters: { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '02' }, settings: { onError: 'continueRegularOutput' } }],
				items: [{ plate }],
				credentialId: credential.id,
				credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, ...budget, ...credential.extra } },
			});
		expect((await lookup({}, '京A41001')).json()[0].error).toBeUndefined();
		await runSms(optOut('add'), ['13900004105']);
		const withRedis = { extra: { sharedLimitRedisUrl: redis.url } };
		expect((await runSms(sendParameters(emulator), ['13900004105'], withRedis)).error?.message).toMatch(OPTED_OUT);
		expect((await lookup(withRedis, '京A41002')).json()[0].error).toMatch(/Daily budget: .*\(1\.20 yuan spent;/);
		const stillOnFile = await runSms(sendParameters(emulator), ['13900004106'], { id: 'still-on-file' });
		expect(stillOnFile.error?.message).toMatch(/opt-out list could not be read: This account's opt-out list and budgets are kept in the Redis at 127\.0\.0\.1:\d+.*Set that Redis as this credential's "Shared Redis URL for Limits and Send Records"/);
		expect(sendRequests()).toBe(0);
	});
});

describe('process memory (n8n 1.x on Node 20 without a Redis)', () => {
	const inMemory = () => jest.spyOn(openStore, 'openDurableStore').mockResolvedValue(new MemoryStore());

	it('refuses Opt-Out Add, Remove and Check, naming the fix', async () => {
		inMemory();
		for (const operation of ['add', 'remove', 'check']) {
			const result = await runSms(optOut(operation), ['13900004107']);
			expect(result.error?.message).toMatch(/^The opt-out list (was not changed|could not be read): .*kept only where it outlives n8n, and this n8n has only this n8n process's memory: set "Shared Redis URL for Limits and Send Records" in the credential, or run n8n on Node 22\.13 or later/);
		}
	});

	it('refuses a send while the SQLite file of a newer Node may hold a list; sends when there is none', async () => {
		inMemory();
		expect((await runSms(sendParameters(emulator), ['13900004108'])).error).toBeUndefined();
		writeFileSync(process.env.DATA_GATEWAY_STORE_FILE as string, '');
		const refused = await runSms(sendParameters(emulator), ['13900004109']);
		expect(refused.error?.message).toMatch(/^SMS not sent: the opt-out list .*An opt-out list may be kept in the SQLite file that this Node cannot read \(.*\.sqlite\)/);
		expect(sendRequests()).toBe(1);
	});
});
