import type { IDataObject } from 'n8n-workflow';

import type { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { startEmulator } from '../emulator/server';
import { notStarted, post, report, serve, serveEachTest, signature, started, template } from './callbacks';
import { serveWebhook } from './webhookServer';

serveEachTest();

describe('each action starts the workflow once, with a readable item', () => {
	it('report: the task under `report`, status label, one receiveDate with its ISO form', async () => {
		const { url, starts } = await serve();
		expect(await post(url, report('T1'))).toEqual(started);
		expect(starts).toHaveLength(1);
		expect(starts[0]).toHaveLength(1);
		expect(starts[0][0]).toHaveLength(1);
		const { json } = starts[0][0][0];
		expect(json).toEqual({
			event: 'report',
			action: 'report',
			report: {
				id: 'T1',
				phone: '13900000001',
				content: '【数据网关】您的验证码是1234',
				sendDate: '2026-11-22 10:00:00',
				sendDateIso: '2026-11-22T10:00:00+08:00',
				receiveDate: '2026-11-22 10:00:05',
				receiveDateIso: '2026-11-22T10:00:05+08:00',
				status: 1,
				statusLabel: 'delivered',
				message: '',
			},
			receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
		});
	});

	it('report spelled like the status query (reveiveDate) still gives receiveDate', async () => {
		const { url, starts } = await serve();
		const { receiveDate, ...sms } = report('T1b', -1).sms;
		expect(await post(url, { action: 'report', sms: { ...sms, reveiveDate: receiveDate } })).toEqual(started);
		expect(starts[0][0][0].json.report).toMatchObject({ receiveDate, receiveDateIso: '2026-11-22T10:00:05+08:00', statusLabel: 'failed' });
		expect(starts[0][0][0].json.report).not.toHaveProperty('reveiveDate');
	});

	it('sign: the signature under `signature`, with its review label', async () => {
		const { url, starts } = await serve();
		expect(await post(url, signature('101', 2))).toEqual(started);
		expect(starts[0][0][0].json).toMatchObject({
			event: 'signature',
			action: 'sign',
			signature: { id: '101', name: '数据网关', status: 2, statusLabel: 'rejected', error: '含测试字样', update_timeIso: '2026-11-22T09:10:00+08:00' },
		});
	});

	it('template: the object the gateway sends under `sign` comes out under `template`', async () => {
		const { url, starts } = await serve();
		expect(await post(url, template('202'))).toEqual(started);
		const { json } = starts[0][0][0];
		expect(json).toMatchObject({ event: 'template', template: { id: '202', status: 1, statusLabel: 'approved', content: '您的验证码是${code}', error: null } });
		expect(json).not.toHaveProperty('sign');
	});

	it('fields the gateway does not list are kept', async () => {
		const { url, starts } = await serve();
		await post(url, { ...report('T1c'), traceId: 'x', sms: { ...report('T1c').sms, segments: 2 } });
		expect(starts[0][0][0].json.report).toMatchObject({ segments: 2 });
	});
});
describe('events the user did not pick get 200 and start nothing', () => {
	it('an unselected action', async () => {
		const { url, starts } = await serve({ events: ['report'] });
		expect(await post(url, signature('1'))).toEqual(notStarted('event not selected'));
		expect(await post(url, template('1'))).toEqual(notStarted('event not selected'));
		expect(starts).toHaveLength(0);
	});

	it('a report status filtered out', async () => {
		const { url, starts } = await serve({ reportStatuses: ['failed'] });
		expect(await post(url, report('T2', 1))).toEqual(notStarted('report status delivered not selected'));
		expect(await post(url, report('T3', -1))).toEqual(started);
		expect(starts).toHaveLength(1);
	});

	it('a review result filtered out', async () => {
		const { url, starts } = await serve({ reviewResults: ['rejected'] });
		expect(await post(url, template('7', 1))).toEqual(notStarted('review result approved not selected'));
		expect(await post(url, signature('8', 1))).toEqual(notStarted('review result approved not selected'));
		expect(await post(url, template('8', 2))).toEqual(started);
		expect(starts).toHaveLength(1);
	});

	it('a status that is not final (0) starts nothing', async () => {
		const { url, starts } = await serve();
		expect(await post(url, report('T9', 0))).toEqual(notStarted('report status sending not selected'));
		expect(await post(url, signature('9', 0))).toEqual(notStarted('review result under review not selected'));
		expect(starts).toHaveLength(0);
	});
});
describe('duplicates', () => {
	it('the same event twice within the window starts once; a new status starts again', async () => {
		const { url, starts } = await serve();
		expect(await post(url, signature('55', 2))).toEqual(started);
		expect(await post(url, signature('55', 2))).toEqual(notStarted('duplicate'));
		expect(await post(url, signature('55', 1))).toEqual(started);
		expect(starts).toHaveLength(2);
	});

	it('the same event arriving five times at once starts once', async () => {
		const { url, starts } = await serve();
		const replies = await Promise.all(Array.from({ length: 5 }, () => post(url, report('T10'))));
		expect(replies.filter((reply) => reply.body.started === true)).toHaveLength(1);
		expect(replies.every((reply) => reply.status === 200)).toBe(true);
		expect(starts).toHaveLength(1);
	});

	it('two accounts\' reports with one task ID and status (another number, another send time) are two events', async () => {
		const { url, starts } = await serve();
		const other = { ...report('T14'), sms: { ...report('T14').sms, phone: 13900000002, sendDate: '2026-11-22 10:00:03' } };
		expect(await post(url, report('T14'))).toEqual(started);
		expect(await post(url, other)).toEqual(started);
		expect(await post(url, other)).toEqual(notStarted('duplicate'));
		expect(starts).toHaveLength(2);
	});

	it('a window of 0 turns the memory off', async () => {
		const { url, starts } = await serve({ options: { duplicateWindowSeconds: 0 } });
		await post(url, report('T11'));
		await post(url, report('T11'));
		expect(starts).toHaveLength(2);
	});

	it('another n8n process (own memory) that loads the saved static data starts nothing for the same event', async () => {
		// A fresh copy of the node module stands for another process: its in-process memory is empty.
		const anotherProcess = () => {
			let type: DataGatewaySmsTrigger | undefined;
			jest.isolateModules(() => {
				const module = jest.requireActual('../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node') as typeof import('../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node');
				type = new module.DataGatewaySmsTrigger();
			});
			return type!;
		};
		const database: IDataObject = {};
		const first = await serve({}, { nodeId: 'node-in-db', staticData: database });
		expect(await post(first.url, report('T13'))).toEqual(started);

		const withoutDatabase = await serveWebhook(anotherProcess(), {}, { nodeId: 'node-in-db', staticData: {} });
		const withDatabase = await serveWebhook(anotherProcess(), {}, { nodeId: 'node-in-db', staticData: database });
		try {
			// Without the saved static data another process would start it again; with it, it does not.
			expect(await post(withoutDatabase.url, report('T13'))).toEqual(started);
			expect(await post(withDatabase.url, report('T13'))).toEqual(notStarted('duplicate'));
			expect(await post(withDatabase.url, report('T14'))).toEqual(started);
			expect(withDatabase.starts).toHaveLength(1);
		} finally {
			await withoutDatabase.close();
			await withDatabase.close();
		}
	});

	it('an event caught on the Test URL does not swallow the same event on the Production URL', async () => {
		const testUrl = await serve({}, { nodeId: 'shared-node', mode: 'manual' });
		expect(testUrl.url).toContain('/webhook-test/');
		expect(await post(testUrl.url, report('T12'))).toEqual(started);
		await testUrl.close();
		const production = await serve({}, { nodeId: 'shared-node', mode: 'webhook' });
		expect(await post(production.url, report('T12'))).toEqual(started);
	});
});

describe('callbacks from the gateway emulator', () => {
	it('start exactly one workflow per event for report, sign and template, each answered 200', async () => {
		const { url, starts } = await serve();
		// Reviews and delivery end when the test says so, not on a timer.
		const emulator = await startEmulator({ reviewDelayMs: 3_600_000, deliveryDelayMs: 3_600_000, deliveryFailureShare: 0, callbackUrl: url });
		try {
			const get = async (path: string, params: Record<string, string>) =>
				(await (await fetch(`${emulator.url}${path}?${new URLSearchParams({ ...params, appCode: emulator.demo.appCode })}`)).json()) as IDataObject;
			await get('/sms/add_sign', { name: '新签名', remark: 'r' });
			await get('/sms/add_template', { name: 'n', content: '通知${code}', remark: 'r' });
			await get('/sms/send', { signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: '13900009001', params: '{"code":"1"}' });
			emulator.finishPending('review');
			emulator.finishPending('delivery');
			// Waits for the condition; the bound (10 s) only stops a broken run.
			for (let wait = 0; wait < 500 && emulator.callbacks().length < 3; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
			expect(emulator.callbacks().map((callback) => callback.status)).toEqual([200, 200, 200]);
			expect(starts.map(([[item]]) => item.json.event).sort()).toEqual(['report', 'signature', 'template']);
		} finally {
			await emulator.close();
		}
	});
});
