import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { serveWebhook, type ServeOptions, type WebhookServer } from './webhookServer';

/** Shared setup of the trigger test files: gateway-shaped callbacks, a served trigger, and a poster. */
const trigger = new DataGatewaySmsTrigger();

export const report = (id: string, status = 1) => ({
	action: 'report',
	sms: { id, phone: 13900000001, content: '【数据网关】您的验证码是1234', sendDate: '2026-11-22 10:00:00', receiveDate: '2026-11-22 10:00:05', status, message: '' },
});
export const signature = (id: string, status = 1) => ({
	action: 'sign',
	sign: { id, user_id: 1, name: '数据网关', remark: 'r', status, error: status === 2 ? '含测试字样' : '', create_time: '2026-11-22 09:00:00', update_time: '2026-11-22 09:10:00' },
});
export const template = (id: string, status = 1) => ({
	action: 'template',
	sign: { id, user_id: 1, name: '验证码', content: '您的验证码是${code}', remark: 'r', status, error: null, create_time: '2026-11-22 09:00:00', update_time: '2026-11-22 09:10:00' },
});

let server: WebhookServer | undefined;
/** Serves the trigger as a webhook; the test file's serveEachTest() closes it after each test. */
export async function serve(parameters: INodeParameters = {}, options?: ServeOptions) {
	server = await serveWebhook(trigger, parameters, options);
	return server;
}
export function serveEachTest() {
	afterEach(async () => {
		await server?.close();
		server = undefined;
	});
}

interface PostOptions {
	headers?: Record<string, string>;
	contentType?: string;
	/** Leave out the gateway's X-Service-Event header. */
	withoutEventHeader?: boolean;
}

/** Posts like the gateway does: JSON with `X-Service-Event: sms`. */
export async function post(url: string, body: unknown, options: PostOptions = {}) {
	const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json', ...options.headers };
	if (!options.withoutEventHeader) headers['x-service-event'] ??= 'sms';
	const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
	return { status: response.status, body: (await response.json()) as IDataObject };
}

export const started = { status: 200, body: { received: true, started: true } };
export const notStarted = (reason: string) => ({ status: 200, body: { received: true, started: false, reason } });
