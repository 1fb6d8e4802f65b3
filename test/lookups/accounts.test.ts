/**
 * Issue 33 item 13: what the durable store keeps for one account never serves another. Two
 * credentials with different appCodes on one n8n (the same workflow node, so only the account
 * differs): kept answers, Only New's seen state and the telephone quota's count are each the
 * account's own. Every other test of these features uses one appCode, so a key that left the
 * account out went unseen.
 */
import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { hostClock } from '../../nodes/shared/store/hostClock';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

const realClock = hostClock.now;
afterEach(() => {
	hostClock.now = realClock;
});

const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();
const telephone = new DataGatewayTelephone();

type Account = 'first' | 'second';
/** Two accounts of the emulator: each credential holds one appCode, the rest alike. */
const appCodeOf = (account: Account) => (account === 'first' ? emulator.demo.memberAppCode : emulator.demo.appCode);

/** One execution of the same saved workflow node, with the given account's credential. */
function execute(account: Account, type: INodeType, parameters: INodeParameters, items: IDataObject[], credential: IDataObject = {}) {
	return runWorkflow({
		steps: [{ name: 'Lookup', type, parameters, settings: { continueOnFail: true } }],
		items,
		credentialId: `${account}-credential`,
		credentials: { dataGatewayApi: { appCodeSecret: appCodeOf(account), baseUrl: emulator.url, ...credential } },
	});
}

/** The emulator's billed calls to a path, by account label (the ledger never holds an appCode). */
function billedByAccount(path: string): Map<string, number> {
	const counts = new Map<string, number>();
	for (const entry of emulator.ledger().calls) {
		if (entry.path === path && entry.billed) counts.set(entry.account, (counts.get(entry.account) ?? 0) + 1);
	}
	return counts;
}

describe('Reuse Answers For: a kept answer serves only the account that paid for it', () => {
	const registration = { resource: 'registration', operation: 'get', keyword: '两账户复用有限公司', options: { reuseAnswersHours: 24 } };

	it('the second account pays its own call and gets its own answer; each then reuses its own', async () => {
		const first = await execute('first', enterprise, registration, [{}]);
		expect(first.json()[0]).toMatchObject({ reused: false, costYuan: 0.35 });

		const second = await execute('second', enterprise, registration, [{}]);
		expect(second.json()[0]).toMatchObject({ reused: false, costYuan: 0.35 });
		expect(second.json()[0].name).toBe('两账户复用有限公司');
		expect(second.json()[0].answeredAt).toEqual(expect.any(String));
		// One billed call per account, each made with that account's appCode.
		expect([...billedByAccount('/enterprise/detail_info').values()]).toEqual([1, 1]);

		// Each account's answer is kept: the feature works, for each on its own.
		expect((await execute('first', enterprise, registration, [{}])).json()[0]).toMatchObject({ reused: true, costYuan: 0, answeredAt: first.json()[0].answeredAt });
		expect((await execute('second', enterprise, registration, [{}])).json()[0]).toMatchObject({ reused: true, costYuan: 0, answeredAt: second.json()[0].answeredAt });
		expect(emulator.ledger().byPath['/enterprise/detail_info']?.calls).toBe(2);
	});

	it('copyright pages kept by one account are paid again by the other', async () => {
		const listing = { resource: 'copyright', operation: 'getAll', keyword: 'many works 两账户', returnAll: false, limit: 15, options: { reuseAnswersHours: 24 } };
		const first = await execute('first', enterprise, listing, [{}]);
		expect(first.json()).toHaveLength(15);
		expect(first.json().every((record) => record.reused === false)).toBe(true);

		const second = await execute('second', enterprise, listing, [{}]);
		expect(second.json()).toHaveLength(15);
		expect(second.json().every((record) => record.reused === false)).toBe(true);
		// Two pages each, each paid by its own account.
		expect([...billedByAccount('/enterprise/copyright').values()]).toEqual([2, 2]);
	});
});

describe('Only New Violations: what one account was shown is still new to another', () => {
	const parameters = { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', options: { onlyNewViolations: true } };
	const fleet = [{ plate: '京A31001' }, { plate: '沪B31002' }];

	it('the same node, the same plates: the second account is shown every violation once, like the first', async () => {
		const first = await execute('first', vehicle, parameters, fleet);
		const shown = first.json();
		expect(shown.length).toBeGreaterThan(0);
		// Nothing new the second time for the first account: the seen state works.
		expect((await execute('first', vehicle, parameters, fleet)).json()).toEqual([]);

		const second = await execute('second', vehicle, parameters, fleet);
		expect(second.json().map((plate) => [plate.plateNumber, (plate.violations as IDataObject[]).length])).toEqual(
			shown.map((plate) => [plate.plateNumber, (plate.violations as IDataObject[]).length]),
		);
		expect((await execute('second', vehicle, parameters, fleet)).json()).toEqual([]);
	});
});

describe('the free telephone quota counts per account', () => {
	const parameters = { phoneNumber: '={{ $json.phone }}' };
	const freePlan = { telephonePlan: 'freeQuota', telephoneDailyFreeCalls: 2 };
	const numbers = (from: number) => [0, 1, 2].map((index) => ({ phone: `137${String(from + index).padStart(8, '0')}` }));

	it("one account's used-up day leaves the other's quota whole", async () => {
		// 10:00 China time on a day of this test's own.
		hostClock.now = () => Date.UTC(2026, 6, 15, 2);
		// Two App Codes on one gateway are two accounts, with no Account field set (issue 41).
		const first = await execute('first', telephone, parameters, numbers(100), freePlan);
		expect(first.json().map((item) => item.error === undefined)).toEqual([true, true, false]);
		expect(first.json()[2].error).toMatch(/free telephone quota of 2 identifications a day is used up/);

		const second = await execute('second', telephone, parameters, numbers(200), freePlan);
		expect(second.json().map((item) => item.error === undefined)).toEqual([true, true, false]);
		expect(emulator.ledger().byPath['/telecom/identify']?.calls).toBe(4);
	});
});
