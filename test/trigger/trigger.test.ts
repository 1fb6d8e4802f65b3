import type { IDataObject } from 'n8n-workflow';

import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { startEmulator } from '../emulator/server';
import { serveWebhook, type WebhookServer } from '../harness/webhook';

const trigger = new DataGatewaySmsTrigger();
const allEvents = { events: ['report', 'sign', 'template'], reportStatuses: ['delivered', 'failed'], reviewResults: ['approved', 'rejected'] };

const report = (id: string, status = 1) => ({
	action: 'report',
	sms: { id, phone: '13900000001', content: '【数据网关】您的验证码是1234', sendDate: '2026-11-22 10:00:00', receiveDate: '2026-11-22 10:00:05', status, message: '' },
});
const signature = (id: string, status = 1) => ({
	action: 'sign',
	sign: { id, user_id: 1, name: '数据网关', remark: 'r', status, error: status === 2 ? '含测试字样' : '', create_time: '2026-11-22 09:00:00', update_time: '2026-11-22 09:10:00' },
});
const template = (id: string, status = 1) => ({
	action: 'template',
	sign: { id, user_id: 1, name: '验证码', content: '您的验证码是${code}', remark: 'r', status, error: null, create_time: '2026-11-22 09:00:00', update_time: '2026-11-22 09:10:00' },
});

let server: WebhookServer | undefined;
afterEach(async () => {
	await server?.close();
	server = undefined;
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-service-event': 'sms', ...headers },
		body: typeof body === 'string' ? body : JSON.stringify(body),
	});
	return { status: response.status, body: (await response.json()) as IDataObject };
}

describe('each action starts one workflow with a clear shape', () => {
	it.each([
		['report', report('T1'), 'report', { id: 'T1', status: 1, statusLabel: 'delivered', receiveDateIso: '2026-11-22T10:00:05+08:00' }],
		['sign', signature('101'), 'signature', { id: '101', status: 1, statusLabel: 'approved' }],
		['template', template('202', 2), 'template', { id: '202', status: 2, statusLabel: 'rejected', content: '您的验证码是${code}' }],
	])('%s', async (_action, body, key, expected) => {
		server = await serveWebhook(trigger, allEvents);
		const reply = await post(server.url, body);
		expect(reply).toEqual({ status: 200, body: { received: true, started: true } });
		expect(server.starts).toHaveLength(1);
		const [[[item]]] = server.starts;
		expect(item.json).toMatchObject({ event: key, [key]: expected });
		expect(item.json.receivedAt).toEqual(expect.any(String));
	});
});

describe('bad input gets 400 and starts nothing', () => {
	it.each([
		['malformed JSON', '{"action": "report", "sms": {', /not valid JSON/],
		['a missing action', { sms: report('T1').sms }, /missing action/],
		['an unknown action', { action: 'refund', sms: {} }, /unknown action "refund"/],
		['a missing field', { action: 'report', sms: { phone: '1' } }, /invalid report callback: sms\.id/],
		['a mistyped field', { action: 'sign', sign: { ...signature('1').sign, status: 'approved' } }, /invalid sign callback: sign\.status/],
		['a missing object', { action: 'template' }, /invalid template callback: sign/],
	])('%s', async (_name, body, reason) => {
		server = await serveWebhook(trigger, allEvents);
		const reply = await post(server.url, body);
		expect(reply.status).toBe(400);
		expect(String(reply.body.error)).toMatch(reason);
		expect(server.starts).toHaveLength(0);
	});

	it('a wrong X-Service-Event header', async () => {
		server = await serveWebhook(trigger, allEvents);
		const reply = await post(server.url, report('T1'), { 'x-service-event': 'payment' });
		expect(reply.status).toBe(400);
		expect(server.starts).toHaveLength(0);
	});
});

describe('events the user did not pick get 200 and start nothing', () => {
	it('an unselected action', async () => {
		server = await serveWebhook(trigger, { ...allEvents, events: ['report'] });
		expect(await post(server.url, signature('1'))).toEqual({ status: 200, body: { received: true, started: false, reason: 'event not selected' } });
		expect(server.starts).toHaveLength(0);
	});

	it('a report status filtered out', async () => {
		server = await serveWebhook(trigger, { ...allEvents, reportStatuses: ['failed'] });
		expect((await post(server.url, report('T2', 1))).body.started).toBe(false);
		expect((await post(server.url, report('T3', -1))).body.started).toBe(true);
		expect(server.starts).toHaveLength(1);
	});

	it('a review result filtered out', async () => {
		server = await serveWebhook(trigger, { ...allEvents, reviewResults: ['rejected'] });
		expect((await post(server.url, template('7', 1))).body.started).toBe(false);
		expect((await post(server.url, template('8', 2))).body.started).toBe(true);
		expect(server.starts).toHaveLength(1);
	});
});

describe('authentication failures get 401 or 403 and start nothing', () => {
	it('URL token: missing or wrong is 401, right starts', async () => {
		server = await serveWebhook(trigger, { ...allEvents, security: { token: 's3cret-token' } });
		expect((await post(server.url, report('T4'))).status).toBe(401);
		expect((await post(`${server.url}?token=wrong`, report('T4'))).status).toBe(401);
		expect((await post(`${server.url}?token=s3cret-token`, report('T4'))).status).toBe(200);
		expect(server.starts).toHaveLength(1);
	});

	it('required header: missing or wrong is 401, right starts', async () => {
		server = await serveWebhook(trigger, { ...allEvents, security: { headerName: 'X-Callback-Secret', headerValue: 'abc123' } });
		expect((await post(server.url, report('T5'))).status).toBe(401);
		expect((await post(server.url, report('T5'), { 'x-callback-secret': 'abc124' })).status).toBe(401);
		expect((await post(server.url, report('T5'), { 'x-callback-secret': 'abc123' })).status).toBe(200);
		expect(server.starts).toHaveLength(1);
	});

	it('IP allow-list: a source outside the ranges is 403, inside starts', async () => {
		server = await serveWebhook(trigger, { ...allEvents, security: { allowedIps: '10.0.0.0/8, 2001:db8::/32' } });
		expect((await post(server.url, report('T6'))).status).toBe(403);
		await server.close();
		server = await serveWebhook(trigger, { ...allEvents, security: { allowedIps: '10.0.0.0/8, 127.0.0.0/8' } });
		expect((await post(server.url, report('T6'))).status).toBe(200);
		expect(server.starts).toHaveLength(1);
	});
});

describe('duplicates', () => {
	it('the same event twice within the window starts once; a new status starts again', async () => {
		server = await serveWebhook(trigger, allEvents, 'dedupe-node');
		expect((await post(server.url, signature('55', 2))).body.started).toBe(true);
		expect(await post(server.url, signature('55', 2))).toEqual({ status: 200, body: { received: true, started: false, reason: 'duplicate' } });
		expect((await post(server.url, signature('55', 1))).body.started).toBe(true);
		expect(server.starts).toHaveLength(2);
	});
});

describe('callbacks from the gateway emulator', () => {
	it('start exactly one workflow per event for report, sign and template', async () => {
		server = await serveWebhook(trigger, allEvents, 'emulator-node');
		const emulator = await startEmulator({ reviewDelayMs: 30, deliveryDelayMs: 30, deliveryFailureShare: 0, callbackUrl: server.url });
		try {
			const get = async (path: string, params: Record<string, string>) =>
				(await (await fetch(`${emulator.url}${path}?${new URLSearchParams({ ...params, appCode: emulator.demo.appCode })}`)).json()) as IDataObject;
			await get('/sms/add_sign', { name: '新签名', remark: 'r' });
			await get('/sms/add_template', { name: 'n', content: '通知${code}', remark: 'r' });
			await get('/sms/send', { signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: '13900009001', params: '{"code":"1"}' });
			for (let wait = 0; wait < 100 && server.starts.length < 3; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
			await new Promise((resolve) => setTimeout(resolve, 100));
			expect(server.starts.map(([[item]]) => item.json.event).sort()).toEqual(['report', 'signature', 'template']);
			expect(emulator.callbacks().every((callback) => callback.status === 200)).toBe(true);
		} finally {
			await emulator.close();
		}
	});
});
