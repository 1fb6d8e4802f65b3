import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { startEmulator } from '../emulator/server';
import { serveWebhook, type ServeOptions, type WebhookServer } from './webhookServer';

const trigger = new DataGatewaySmsTrigger();

const report = (id: string, status = 1) => ({
	action: 'report',
	sms: { id, phone: 13900000001, content: '【数据网关】您的验证码是1234', sendDate: '2026-11-22 10:00:00', receiveDate: '2026-11-22 10:00:05', status, message: '' },
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
async function serve(parameters: INodeParameters = {}, options?: ServeOptions) {
	server = await serveWebhook(trigger, parameters, options);
	return server;
}
afterEach(async () => {
	await server?.close();
	server = undefined;
});

interface PostOptions {
	headers?: Record<string, string>;
	contentType?: string;
	/** Leave out the gateway's X-Service-Event header. */
	withoutEventHeader?: boolean;
}

/** Posts like the gateway does: JSON with `X-Service-Event: sms`. */
async function post(url: string, body: unknown, options: PostOptions = {}) {
	const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json', ...options.headers };
	if (!options.withoutEventHeader) headers['x-service-event'] ??= 'sms';
	const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
	return { status: response.status, body: (await response.json()) as IDataObject };
}

const started = { status: 200, body: { received: true, started: true } };
const notStarted = (reason: string) => ({ status: 200, body: { received: true, started: false, reason } });

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

	it('fields the spec does not list are kept', async () => {
		const { url, starts } = await serve();
		await post(url, { ...report('T1c'), traceId: 'x', sms: { ...report('T1c').sms, segments: 2 } });
		expect(starts[0][0][0].json.report).toMatchObject({ segments: 2 });
	});
});

describe('bad input gets 400 with a short reason and starts nothing', () => {
	it.each([
		['a missing action', { sms: report('T1').sms }, 'missing action'],
		['an unknown action', { action: 'refund', sms: {} }, 'unknown action "refund"'],
		['a missing field', { action: 'report', sms: { phone: '1', status: 1 } }, /^invalid report callback: sms\.id: /],
		['a mistyped field', { action: 'sign', sign: { ...signature('1').sign, status: 'approved' } }, /^invalid sign callback: sign\.status/],
		['a missing object', { action: 'template' }, /^invalid template callback: sign: /],
		['a list instead of an object', [report('T1')], 'body must be a JSON object'],
	])('%s', async (_name, body, reason) => {
		const { url, starts } = await serve();
		const reply = await post(url, body);
		expect(reply.status).toBe(400);
		expect(reply.body.error).toEqual(typeof reason === 'string' ? reason : expect.stringMatching(reason));
		expect(starts).toHaveLength(0);
	});

	it.each([
		['text/plain', 'text/plain'],
		['no parser in n8n (raw body)', 'application/octet-stream'],
	])('malformed JSON sent as %s: 400 from the node', async (_name, contentType) => {
		const { url, starts } = await serve();
		expect(await post(url, '{"action": "report", "sms": {', { contentType })).toEqual({ status: 400, body: { error: 'body is not valid JSON' } });
		expect(starts).toHaveLength(0);
	});

	it('malformed JSON sent as application/json: n8n itself answers 422 before the node runs', async () => {
		const { url, starts, failures } = await serve();
		const reply = await post(url, '{"action": "report", "sms": {');
		expect(reply).toMatchObject({ status: 422, body: { message: 'Failed to parse request body' } });
		expect(starts).toHaveLength(0);
		expect(failures).toHaveLength(0);
	});

	it('an empty body', async () => {
		const { url, starts } = await serve();
		expect(await post(url, '', { contentType: 'application/octet-stream' })).toEqual({ status: 400, body: { error: 'body is empty; expected a JSON object' } });
		expect(starts).toHaveLength(0);
	});

	it('a wrong X-Service-Event header; a missing one is accepted', async () => {
		const { url, starts } = await serve();
		expect(await post(url, report('T1d'), { headers: { 'x-service-event': 'payment' } })).toEqual({ status: 400, body: { error: 'x-service-event header is not "sms"' } });
		expect(starts).toHaveLength(0);
		expect(await post(url, report('T1d'), { withoutEventHeader: true })).toEqual(started);
	});

	it('valid JSON in a body n8n does not parse (text/plain, octet-stream) is read and starts', async () => {
		const { url, starts } = await serve();
		expect(await post(url, report('T1e'), { contentType: 'text/plain' })).toEqual(started);
		expect(await post(url, report('T1f'), { contentType: 'application/octet-stream' })).toEqual(started);
		expect(starts.map((start) => (start[0][0].json.report as IDataObject).id)).toEqual(['T1e', 'T1f']);
	});
});

describe('a rejected callback leaves a trace: a warning in n8n\'s log, and on request an item', () => {
	const withSecrets = { action: 'report', sms: { ...report('T9').sms, phone: '13912345678', content: '您的验证码是987654', status: 'delivered' } };

	it('a malformed callback is logged as a warning naming the reason and the action, without the body\'s values', async () => {
		const { url, starts, logs } = await serve();
		expect((await post(url, withSecrets)).status).toBe(400);
		expect(starts).toHaveLength(0);
		expect(logs).toEqual([
			{
				level: 'warn',
				message: 'Data Gateway SMS Trigger: rejected a callback with HTTP 400: invalid report callback: sms.status: expected an integer, received string (action "report")',
				meta: expect.objectContaining({ node: 'SMS Trigger', status: 400 }),
			},
		]);
		const logged = JSON.stringify(logs);
		for (const secret of ['13912345678', '987654', 'delivered']) expect(logged).not.toContain(secret);
	});

	it('unknown actions, unreadable bodies and failed security checks are logged too; a started event is not', async () => {
		const { url, logs } = await serve({ security: { token: 'url-secret-123' } });
		await post(`${url}?token=url-secret-123`, { action: 'refund' });
		await post(`${url}?token=url-secret-123`, 'not json', { contentType: 'text/plain' });
		await post(`${url}?token=wrong-token-456`, report('T10'));
		expect(await post(`${url}?token=url-secret-123`, report('T11'))).toEqual(started);
		expect(logs.map((log) => log.message)).toEqual([
			'Data Gateway SMS Trigger: rejected a callback with HTTP 400: unknown action (action "refund")',
			'Data Gateway SMS Trigger: rejected a callback with HTTP 400: body is not valid JSON',
			'Data Gateway SMS Trigger: rejected a callback with HTTP 401: missing or wrong token (action "report")',
		]);
		expect(JSON.stringify(logs)).not.toMatch(/url-secret|wrong-token/);
	});

	it('with Output Rejected Events, a rejected callback starts the workflow marked rejected, with the reason and the raw body', async () => {
		const { url, starts } = await serve({ options: { outputRejected: true } });
		const reply = await post(url, withSecrets);
		expect(reply).toEqual({ status: 400, body: { error: expect.stringMatching(/^invalid report callback: sms\.status/) } });
		expect(starts).toHaveLength(1);
		expect(starts[0][0][0].json).toEqual({
			event: 'rejected',
			rejected: true,
			reason: expect.stringMatching(/^invalid report callback: sms\.status: expected an integer, received string "delivered"/),
			httpStatus: 400,
			action: 'report',
			rawBody: JSON.stringify(withSecrets),
			rawBodyChars: JSON.stringify(withSecrets).length,
			rawBodyTruncated: false,
			receivedAt: expect.stringMatching(/^\d{4}-/),
		});
	});

	it('the raw body of a rejected event is cut at 16 KB; security refusals never start the workflow', async () => {
		const { url, starts } = await serve({ options: { outputRejected: true }, security: { token: 'url-secret-123' } });
		const huge = JSON.stringify({ action: 'surprise', padding: 'x'.repeat(40_000) });
		expect((await post(`${url}?token=url-secret-123`, huge, { contentType: 'text/plain' })).status).toBe(400);
		expect((await post(`${url}?token=nope`, { action: 'surprise' })).status).toBe(401);
		expect(starts).toHaveLength(1);
		const event = starts[0][0][0].json;
		expect(event).toMatchObject({ reason: 'unknown action "surprise"', action: 'surprise', rawBodyChars: huge.length, rawBodyTruncated: true });
		expect(event.rawBody).toHaveLength(16_384);
	});

	it('Output Rejected Events is off by default: a rejected callback starts nothing', async () => {
		const { url, starts } = await serve();
		expect((await post(url, { action: 'refund' })).status).toBe(400);
		expect(starts).toHaveLength(0);
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

describe('authentication failures get 401 or 403 and start nothing', () => {
	it('URL token: missing or wrong is 401, right starts', async () => {
		const { url, starts } = await serve({ security: { token: 's3cret-token' } });
		expect(await post(url, report('T4'))).toEqual({ status: 401, body: { error: 'missing or wrong token' } });
		expect((await post(`${url}?token=s3cret-tokeN`, report('T4'))).status).toBe(401);
		expect((await post(`${url}?token=s3cret`, report('T4'))).status).toBe(401);
		expect(starts).toHaveLength(0);
		expect(await post(`${url}?token=s3cret-token`, report('T4'))).toEqual(started);
		expect(starts).toHaveLength(1);
	});

	it('required header: missing or wrong is 401, right starts', async () => {
		const { url, starts } = await serve({ security: { headerName: 'X-Callback-Secret', headerValue: 'abc123' } });
		expect(await post(url, report('T5'))).toEqual({ status: 401, body: { error: 'missing or wrong X-Callback-Secret header' } });
		expect((await post(url, report('T5'), { headers: { 'x-callback-secret': 'abc124' } })).status).toBe(401);
		expect(starts).toHaveLength(0);
		expect(await post(url, report('T5'), { headers: { 'X-Callback-Secret': 'abc123' } })).toEqual(started);
		expect(starts).toHaveLength(1);
	});

	it('version 1.1: the required header is one pair (name and value together); missing or wrong is 401, right starts', async () => {
		const security = { header: { pair: { name: 'X-Callback-Secret', value: 'abc123' } } };
		const { url, starts } = await serve({ security }, { typeVersion: 1.1 });
		expect(await post(url, report('T5b'))).toEqual({ status: 401, body: { error: 'missing or wrong X-Callback-Secret header' } });
		expect(starts).toHaveLength(0);
		expect(await post(url, report('T5b'), { headers: { 'X-Callback-Secret': 'abc123' } })).toEqual(started);
		expect(starts).toHaveLength(1);
	});

	it('version 1.1: a URL token as the examples set it', async () => {
		const { url, starts } = await serve({ security: { token: 'change-me' } }, { typeVersion: 1.1 });
		expect((await post(url, report('T4b'))).status).toBe(401);
		expect(await post(`${url}?token=change-me`, report('T4b'))).toEqual(started);
		expect(starts).toHaveLength(1);
	});

	it('IP allow-list: a source outside the ranges is 403', async () => {
		const { url, starts } = await serve({ security: { allowedIps: '10.0.0.0/8, 2001:db8::/32' } });
		expect(await post(url, report('T6'))).toEqual({ status: 403, body: { error: 'source address not allowed' } });
		expect(starts).toHaveLength(0);
	});

	it('IP allow-list: a source inside a range starts', async () => {
		const { url, starts } = await serve({ security: { allowedIps: '10.0.0.0/8\n127.0.0.0/8' } });
		expect(await post(url, report('T6'))).toEqual(started);
		expect(starts).toHaveLength(1);
	});

	it('all checks together: each one alone can refuse', async () => {
		const security = { allowedIps: '127.0.0.1', token: 'tok', headerName: 'X-Key', headerValue: 'val' };
		const { url, starts } = await serve({ security });
		expect((await post(`${url}?token=tok`, report('T7'))).status).toBe(401);
		expect((await post(url, report('T7'), { headers: { 'x-key': 'val' } })).status).toBe(401);
		expect(starts).toHaveLength(0);
		expect(await post(`${url}?token=tok`, report('T7'), { headers: { 'x-key': 'val' } })).toEqual(started);
	});

	it.each([
		[{ allowedIps: '10.0.0.0/8, 10.0.0.300' }, 'Security > Allowed Source IPs "10.0.0.300" is not an IP address or CIDR range'],
		[{ headerName: 'X-Key' }, 'Security > Header Value is empty while Header Name is set'],
		[{ headerValue: 'val' }, 'Security > Header Name is empty while Header Value is set'],
	])('a check that cannot work (%o) fails closed with an error for the user', async (security, message) => {
		const { url, starts, failures } = await serve({ security });
		expect((await post(url, report('T8'))).status).toBe(500);
		expect(starts).toHaveLength(0);
		expect(failures.map((error) => error.message)).toEqual([message]);
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
