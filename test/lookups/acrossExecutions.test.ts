import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IDataObject, INodeParameters, INodeType, WorkflowExecuteMode } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { hostClock } from '../../nodes/shared/store/hostClock';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow, type WorkflowRunResult, type WorkflowStep } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

const realClock = hostClock.now;
afterEach(() => {
	hostClock.now = realClock;
});
/** Moves the durable store's clock on (the host's: memory or SQLite), as if hours had passed between two executions. */
function hoursPass(hours: number) {
	const at = hostClock.now() + hours * 3_600_000;
	hostClock.now = () => at;
}

const vehicle = new DataGatewayVehicle();
const enterprise = new DataGatewayEnterprise();
const telephone = new DataGatewayTelephone();

/** One scheduled execution: each call is a new execution of the same saved workflow. */
function execute(type: INodeType, parameters: INodeParameters, items: IDataObject[], options: { credential?: IDataObject; settings?: WorkflowStep['settings']; mode?: WorkflowExecuteMode } = {}) {
	return runWorkflow({
		mode: options.mode,
		steps: [{ name: 'Lookup', type, parameters, settings: options.settings }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, ...options.credential } },
	});
}

/** The run's hints, without the store's notice on a Node that has no node:sqlite (the store is then process memory). */
const hints = (result: WorkflowRunResult) =>
	(result.run.data.resultData.runData.Lookup?.[0]?.hints ?? []).map((hint) => hint.message).filter((message) => !message.startsWith('What this node keeps between executions'));
const calls = (path: string) => emulator.ledger().byPath[path]?.calls ?? 0;

describe('Reuse Answers For: a paid answer serves later executions of any workflow with the credential', () => {
	const companies = ['复用甲科技有限公司', '复用乙科技有限公司', '复用丙科技有限公司'];
	const parameters = { resource: 'registration', operation: 'get', keyword: '={{ $json.company }}', options: { reuseAnswersHours: 24 } };
	const items = companies.map((company) => ({ company }));

	it('the same workflow executed twice pays 0 calls the second time, then pays again once the hours have passed', async () => {
		const first = await execute(enterprise, parameters, items);
		expect(first.error).toBeUndefined();
		expect(calls('/enterprise/detail_info')).toBe(3);
		expect(first.json().map((company) => [company.reused, company.costYuan])).toEqual([[false, 0.35], [false, 0.35], [false, 0.35]]);
		expect(first.json()[0].answeredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/);

		hoursPass(23);
		const second = await execute(enterprise, parameters, items);
		expect(calls('/enterprise/detail_info')).toBe(3);
		expect(second.json().map((company) => [company.name, company.reused, company.costYuan])).toEqual(companies.map((name) => [name, true, 0]));
		expect(second.json().map((company) => company.answeredAt)).toEqual(first.json().map((company) => company.answeredAt));
		expect(hints(second)).toEqual(['0 paid calls, 0 yuan; 3 answers reused from earlier runs, 1.05 yuan not spent']);

		hoursPass(2);
		const third = await execute(enterprise, parameters, items);
		expect(calls('/enterprise/detail_info')).toBe(6);
		expect(third.json().every((company) => company.reused === false && company.costYuan === 0.35)).toBe(true);
	});

	it('another workflow node with the option and the same credential reuses the answer; a node without it asks again', async () => {
		await execute(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD54321', carType: '52', options: { reuseAnswersHours: 1 } }, [{}]);
		const reusing = await execute(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD54321', carType: '52', options: { reuseAnswersHours: 5 } }, [{}]);
		expect(reusing.json()[0]).toMatchObject({ reused: true, costYuan: 0 });
		const asking = await execute(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD54321', carType: '52' }, [{}]);
		expect(asking.json()[0]).not.toHaveProperty('reused');
		expect(calls('/car/query')).toBe(2);
	});

	it('in one execution, a node without the option does not get an answer from an earlier execution', async () => {
		const detail = { resource: 'vehicle', operation: 'getDetail', carNumber: '粤BD65432', carType: '52' };
		await execute(vehicle, { ...detail, options: { reuseAnswersHours: 5 } }, [{}]);
		const both = await runWorkflow({
			steps: [
				{ name: 'Reusing', type: vehicle, parameters: { ...detail, options: { reuseAnswersHours: 5 } } },
				{ name: 'Asking', type: vehicle, parameters: detail },
			],
			items: [{}],
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url } },
		});
		expect(both.json('Reusing')[0]).toMatchObject({ reused: true, costYuan: 0 });
		expect(both.json('Asking')[0]).toMatchObject({ costYuan: 1.2 });
		expect(both.json('Asking')[0]).not.toHaveProperty('reused');
		expect(calls('/car/query')).toBe(2);
	});

	it('a refused answer is never kept: the question is asked again', async () => {
		const refused = { resource: 'registration', operation: 'get', keyword: '404 无此公司', options: { reuseAnswersHours: 24 } };
		for (let run = 0; run < 2; run++) {
			const result = await execute(enterprise, refused, [{}], { settings: { continueOnFail: true } });
			expect(result.json()[0].error).toBeDefined();
		}
		expect(calls('/enterprise/detail_info')).toBe(2);
	});

	it('a misshapen answer (billed, kept for the execution) is not kept for later ones', async () => {
		emulator.setFaults({ sequence: [{ kind: 'misshapen', path: '/enterprise/detail_info' }] });
		const misshapen = { resource: 'registration', operation: 'get', keyword: '畸形回答有限公司', options: { reuseAnswersHours: 24 } };
		const first = await execute(enterprise, misshapen, [{}]);
		expect(first.json()[0].warning).toBeDefined();
		const second = await execute(enterprise, misshapen, [{}]);
		expect(second.json()[0]).toMatchObject({ reused: false, name: '畸形回答有限公司' });
		expect(calls('/enterprise/detail_info')).toBe(2);
	});
});

describe('Only New Violations: a scheduled fleet check outputs only what it has not reported', () => {
	const plates = ['京A10001', '京A10002', '沪B20003', '粤B30004', '苏E40005'];
	const fleet = plates.map((plate) => ({ plate }));
	const parameters = { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', options: { onlyNewViolations: true } };

	it('a violation added to the gateway between two executions is the only one output by the second', async () => {
		const first = await execute(vehicle, parameters, fleet);
		const reported = first.json();
		expect(reported.length).toBeGreaterThan(0);
		expect(reported.every((plate) => (plate.violations as IDataObject[]).length > 0)).toBe(true);

		emulator.configure({ addedViolations: { 沪B20003: 1 } });
		const second = await execute(vehicle, parameters, fleet);
		expect(second.json()).toHaveLength(1);
		const [news] = second.json();
		expect(news).toMatchObject({ plateNumber: '沪B20003', violationCount: 1, costYuan: 0.04 });
		expect(news.violations).toHaveLength(1);
		expect(second.items()[0].pairedItem).toEqual({ item: 2 });
		expect(hints(second)).toEqual(['5 paid calls, 0.2 yuan; 5 plates checked, 1 with new violations']);

		const third = await execute(vehicle, parameters, fleet);
		expect(third.json()).toEqual([]);
		expect(hints(third)).toContain('5 paid calls, 0.2 yuan; 5 plates checked, 0 with new violations');
	});

	it('Start Over forgets what was seen: everything is new again, once', async () => {
		const startOver = { ...parameters, options: { onlyNewViolations: true, startOver: true } };
		const first = await execute(vehicle, startOver, fleet);
		expect(first.json().length).toBeGreaterThan(0);
		expect((await execute(vehicle, parameters, fleet)).json()).toEqual([]);
		const again = await execute(vehicle, startOver, fleet);
		expect(again.json()).toEqual(first.json());
		expect((await execute(vehicle, parameters, fleet)).json()).toEqual([]);
	});

	it("n8n's Retry execution of a failed execution reports again what that execution output", async () => {
		const startOver = { ...parameters, options: { onlyNewViolations: true, startOver: true } };
		await execute(vehicle, startOver, fleet);
		emulator.configure({ addedViolations: { 粤B30004: 1 } });
		// This execution outputs the news, then fails in a later node (the notification, say).
		expect((await execute(vehicle, parameters, fleet)).json().map((plate) => plate.plateNumber)).toEqual(['粤B30004']);
		const retried = await execute(vehicle, parameters, fleet, { mode: 'retry' });
		expect(retried.json().map((plate) => [plate.plateNumber, (plate.violations as IDataObject[]).length])).toEqual([['粤B30004', 1]]);
		expect((await execute(vehicle, parameters, fleet, { mode: 'trigger' })).json()).toEqual([]);
	});

	it('with reuse as well, an unchanged fleet costs nothing and reports nothing', async () => {
		const both = { ...parameters, options: { onlyNewViolations: true, reuseAnswersHours: 12, startOver: true } };
		await execute(vehicle, both, fleet);
		emulator.resetLedger();
		const second = await execute(vehicle, { ...parameters, options: { onlyNewViolations: true, reuseAnswersHours: 12 } }, fleet);
		expect(second.json()).toEqual([]);
		expect(calls('/luoz/query')).toBe(0);
		expect(hints(second)).toContain('0 paid calls, 0 yuan; 5 answers reused from earlier runs, 0.2 yuan not spent; 5 plates checked, 0 with new violations');
	});
});

describe('Copyright listings: pages reused across executions, only new records', () => {
	const listing = (keyword: string, options: INodeParameters, limit = 15) => ({ resource: 'copyright', operation: 'getAll', keyword, returnAll: false, limit, options });

	it('a second execution reads its pages from the store: 0 calls, every record says reused', async () => {
		const first = await execute(enterprise, listing('many works 复用', { reuseAnswersHours: 24 }), [{}]);
		expect(first.json()).toHaveLength(15);
		expect(calls('/enterprise/copyright')).toBe(2);
		const second = await execute(enterprise, listing('many works 复用', { reuseAnswersHours: 24 }), [{}]);
		expect(calls('/enterprise/copyright')).toBe(2);
		expect(second.json().map((record) => record.registrationNumber)).toEqual(first.json().map((record) => record.registrationNumber));
		expect(second.json().every((record) => record.reused === true && record.costYuan === 0 && typeof record.answeredAt === 'string')).toBe(true);
		expect(hints(second)).toEqual(['0 paid calls, 0 yuan; 2 answers reused from earlier runs, 0.4 yuan not spent']);
	});

	it('Only New Records: a later listing outputs only the records not output before', async () => {
		const first = await execute(enterprise, listing('many works 新记录', { onlyNewRecords: true, startOver: true }, 10), [{}]);
		expect(first.json()).toHaveLength(10);
		const same = await execute(enterprise, listing('many works 新记录', { onlyNewRecords: true }, 10), [{}]);
		expect(same.json()).toEqual([]);
		expect(hints(same)).toContain('1 paid call, 0.2 yuan; 1 company checked, 0 with new records');
		const longer = await execute(enterprise, listing('many works 新记录', { onlyNewRecords: true }, 15), [{}]);
		expect(longer.json()).toHaveLength(5);
		expect(new Set([...first.json(), ...longer.json()].map((record) => record.registrationNumber)).size).toBe(15);
		// The one cost column still adds up to what the item paid: two pages.
		expect(Math.round(longer.json().reduce((sum, record) => sum + Number(record.costYuan), 0) * 10000) / 10000).toBe(0.4);
	});

	it('Only New Records: two items of one company with different limits in one run each output their new records, and all of them count as output', async () => {
		const parameters = { ...listing('many works 两项', { onlyNewRecords: true, startOver: true }), limit: '={{ $json.limit }}' };
		const first = await execute(enterprise, parameters, [{ limit: 10 }, { limit: 15 }]);
		const perItem = (result: WorkflowRunResult) => [0, 1].map((input) => result.items().filter((item) => (item.pairedItem as { item: number }).item === input).length);
		expect(perItem(first)).toEqual([10, 15]);
		expect(hints(first)).toContain('2 paid calls, 0.4 yuan; 1 page answered without a new call; 2 companies checked, 2 with new records');
		const again = await execute(enterprise, { ...parameters, options: { onlyNewRecords: true } }, [{ limit: 15 }]);
		expect(again.json()).toEqual([]);
	});
});

describe('Only When Changed: registration and telephone output an answer unlike the last one', () => {
	it('the same company twice: output once', async () => {
		const parameters = { resource: 'registration', operation: 'get', keyword: '变更检查有限公司', options: { onlyWhenChanged: true } };
		expect((await execute(enterprise, parameters, [{}])).json()).toHaveLength(1);
		const unchanged = await execute(enterprise, parameters, [{}]);
		expect(unchanged.json()).toEqual([]);
		expect(hints(unchanged)).toContain('1 paid call, 0.35 yuan; 1 company checked, 0 changed');
	});

	it('telephone numbers: the second execution outputs none of the unchanged numbers', async () => {
		const numbers = [{ phone: '13811112222' }, { phone: '13811113333' }];
		const parameters = { phoneNumber: '={{ $json.phone }}', options: { onlyWhenChanged: true } };
		expect((await execute(telephone, parameters, numbers)).json()).toHaveLength(2);
		expect((await execute(telephone, parameters, numbers)).json()).toEqual([]);
	});
});

describe('the free telephone quota', () => {
	const numbers = (count: number, from = 0) => Array.from({ length: count }, (_, index) => ({ phone: `139${String(from + index).padStart(8, '0')}` }));
	const parameters = { phoneNumber: '={{ $json.phone }}' };
	const freePlan = { appCodeSecret: 'demo-app-code', telephonePlan: 'freeQuota' };
	/** Each test counts on a day of its own (China time), for the count is per credential and day. */
	const onDay = (day: number, chinaHour = 10) => {
		hostClock.now = () => Date.UTC(2026, 5, day, chinaHour - 8);
	};

	it('105 identifications by a free-quota credential: 100 calls, 5 refused before calling, naming the quota and its reset', async () => {
		onDay(1);
		const result = await execute(telephone, parameters, numbers(105), { credential: freePlan, settings: { continueOnFail: true } });
		expect(calls('/telecom/identify')).toBe(100);
		const items = result.json();
		expect(items).toHaveLength(105);
		expect(items.slice(0, 100).every((item) => item.error === undefined)).toBe(true);
		for (const refused of items.slice(100)) {
			expect(refused.error).toMatch(/free telephone quota of 100 identifications a day is used up/);
			expect(refused.errorDescription).toMatch(/No call was made for this item\. The quota starts again at \d{4}-\d{2}-\d{2}T00:00:00\+08:00/);
		}
		expect(hints(result)).toContain("100 free calls, 0 yuan (within the gateway's daily free quota); 5 items failed; 100 of 100 free calls today");
	});

	it('without Continue On Fail, an item beyond the quota stops the node before any call', async () => {
		onDay(10);
		const result = await execute(telephone, parameters, numbers(3, 300), { credential: { ...freePlan, telephoneDailyFreeCalls: 2 } });
		// The third item, named once and counted from 1 (n8n's editor adds no "[item 2]": itemIndex is left out).
		expect(result.error?.message).toMatch(/^Item 3: .*free telephone quota of 2 identifications a day is used up/);
		expect(result.error?.itemIndex).toBeUndefined();
		expect(calls('/telecom/identify')).toBe(0);
		// The two calls it reserved were given back: the day still has room for them.
		const next = await execute(telephone, parameters, numbers(2, 400), { credential: { ...freePlan, telephoneDailyFreeCalls: 2 } });
		expect(next.error).toBeUndefined();
		expect(calls('/telecom/identify')).toBe(2);
	});

	it('the count spans executions and starts again on the next China day', async () => {
		const credential = { ...freePlan, telephoneDailyFreeCalls: 3 };
		// 23:00 China time: the day ends in an hour.
		onDay(2, 23);
		const first = await execute(telephone, parameters, numbers(2, 500), { credential });
		expect(hints(first)).toContain("2 free calls, 0 yuan (within the gateway's daily free quota); 2 of 3 free calls today");
		const second = await execute(telephone, parameters, numbers(2, 600), { credential, settings: { continueOnFail: true } });
		expect(second.json()[1].errorDescription).toMatch(/starts again at 2026-06-03T00:00:00\+08:00/);
		expect(calls('/telecom/identify')).toBe(3);
		hoursPass(1);
		const nextDay = await execute(telephone, parameters, numbers(2, 700), { credential });
		expect(nextDay.error).toBeUndefined();
		expect(hints(nextDay)).toContain("2 free calls, 0 yuan (within the gateway's daily free quota); 2 of 3 free calls today");
	});

	it('switched off, or a member, or no plan: never refused; the count is still shown', async () => {
		onDay(4);
		const off = await execute(telephone, parameters, numbers(2, 800), { credential: { ...freePlan, telephoneDailyFreeCalls: 1, telephoneRefuseBeyondQuota: false } });
		expect(off.error).toBeUndefined();
		expect(hints(off)).toContain("2 free calls, 0 yuan (within the gateway's daily free quota); 2 of 1 free calls today");
		onDay(5);
		const member = await execute(telephone, parameters, numbers(3, 900), { credential: { telephonePlan: 'member' } });
		expect(member.error).toBeUndefined();
		expect(hints(member)).toContain("3 free calls, 0 yuan (within the gateway's daily free quota); 3 calls today");
	});
});

describe('the examples: their Data Gateway nodes as saved', () => {
	type Example = { nodes: Array<{ name: string; type: string; typeVersion: number; parameters: INodeParameters }> };
	const example = (file: string) => JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', file), 'utf8')) as Example;
	const node = (workflow: Example, name: string) => workflow.nodes.find((candidate) => candidate.name === name) as Example['nodes'][number];

	it('fleet-check.json: the second morning reports only the violation committed since the first', async () => {
		const fleetCheck = example('fleet-check.json');
		const plates = [...String(node(fleetCheck, 'Fleet').parameters.jsCode).matchAll(/"([^"]+)"/g)].map((match) => ({ plate: match[1] }));
		const violations = node(fleetCheck, 'New Violations');
		const morning = () =>
			runWorkflow({
				steps: [{ name: 'Lookup', type: vehicle, parameters: violations.parameters, typeVersion: violations.typeVersion }],
				items: plates,
				credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url } },
			});
		// The harness names its workflow and nodes alike for every test: start from a clean slate.
		await execute(vehicle, { ...violations.parameters, options: { onlyNewViolations: true, startOver: true } }, plates);
		expect((await morning()).json()).toEqual([]);
		emulator.configure({ addedViolations: { [plates[4].plate]: 1 } });
		const news = (await morning()).json();
		expect(news.map((item) => [item.plateNumber, (item.violations as IDataObject[]).length])).toEqual([[plates[4].plate, 1]]);
	});

	it('order-company.json: orders of the same company all day pay once', async () => {
		const company = node(example('order-company.json'), 'Company');
		const order = () =>
			runWorkflow({
				steps: [{ name: 'Lookup', type: enterprise, parameters: { ...company.parameters, keyword: '={{ $json.company }}' }, typeVersion: company.typeVersion }],
				items: [{ orderId: 'A-1', company: '示例订单客户有限公司' }],
				credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url } },
			});
		expect((await order()).json()[0]).toMatchObject({ reused: false, costYuan: 0.35 });
		hoursPass(20);
		expect((await order()).json()[0]).toMatchObject({ reused: true, costYuan: 0, name: '示例订单客户有限公司' });
		expect(calls('/enterprise/detail_info')).toBe(1);
	});
});

describe('the fields a run adds keep their places, whichever way the answer is shown', () => {
	it.each([
		['simplified: costYuan in its place among the fields, the reuse fields last', true, ['reused', 'answeredAt']],
		['raw: costYuan, then the reuse fields, last', false, ['costYuan', 'reused', 'answeredAt']],
	])('a paid vehicle detail, %s', async (_label, simplify, tail) => {
		const result = await execute(vehicle, { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', simplify, options: { reuseAnswersHours: 1 } }, [{ plate: '京A12399' }]);
		expect(result.error).toBeUndefined();
		const keys = Object.keys(result.json()[0]);
		expect(keys.slice(-tail.length)).toEqual(tail);
		if (simplify) expect(keys.slice(0, 7)).toEqual(['plateNumber', 'vin', 'brand', 'model', 'vehicleType', 'status', 'costYuan']);
		expect(keys.filter((key) => key === 'costYuan')).toHaveLength(1);
	});
});
