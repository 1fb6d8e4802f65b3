import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { PRICES_YUAN } from '../../nodes/shared/gateway/catalog';
import { startEmulator, type Emulator } from './server';

let emulator: Emulator;
let receiver: Server;
/** Answers are read loosely in these tests, as JSON.parse gives them. */
type Json = ReturnType<typeof JSON.parse>;
let received: Array<{ headers: Record<string, unknown>; body: Json }>;

async function get(path: string, params: Record<string, string | number> = {}, appCode: string | null = emulator.demo.appCode) {
	const query = new URLSearchParams(Object.entries(params).map(([key, value]): [string, string] => [key, String(value)]));
	if (appCode !== null) query.set('appCode', appCode);
	const response = await fetch(`${emulator.url}${path}?${query}`);
	return (await response.json()) as { code: number; message: string; data?: Json };
}

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
	const started = Date.now();
	for (;;) {
		const value = await read();
		if (done(value)) return value;
		if (Date.now() - started > timeoutMs) throw new Error(`condition not met: ${JSON.stringify(value)}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

const HOUR = 3_600_000;

/** Ends the pending review or delivery of each ID through the admin API, as a test driving the emulator from outside would. */
async function finish(what: 'reviews' | 'deliveries', ...ids: string[]) {
	for (const id of ids) {
		const response = await fetch(`${emulator.url}/__emulator/finish/${what}?id=${id}`, { method: 'POST' });
		expect(response.status).toBe(200);
	}
}

beforeAll(async () => {
	received = [];
	receiver = createServer((request, response) => {
		let text = '';
		request.on('data', (chunk) => (text += chunk));
		request.on('end', () => {
			received.push({ headers: request.headers, body: JSON.parse(text) });
			response.end('ok');
		});
	});
	await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
	// Reviews and deliveries end only when a test finishes them: no test races a timer.
	emulator = await startEmulator({
		reviewDelayMs: HOUR,
		deliveryDelayMs: HOUR,
		deliveryFailureShare: 0,
		callbackUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`,
	});
});
afterAll(async () => {
	await emulator.close();
	await new Promise((resolve) => receiver.close(resolve));
});
beforeEach(() => {
	emulator.reset();
	received.length = 0;
});

describe('appCode', () => {
	it('is required, must be known, and may come as a query parameter or an Authorization header', async () => {
		expect((await get('/luoz/support', {}, null)).code).not.toBe(0);
		expect((await get('/luoz/support', {}, 'wrong')).code).not.toBe(0);
		expect((await get('/luoz/support')).code).toBe(0);
		const response = await fetch(`${emulator.url}/luoz/support`, { headers: { authorization: `AppCode ${emulator.demo.appCode}` } });
		expect(((await response.json()) as { code: number }).code).toBe(0);
	});
});

describe('lookups', () => {
	it('answers support rules as a list, filtered by prefix and province', async () => {
		const all = await get('/luoz/support');
		expect(Array.isArray(all.data)).toBe(true);
		const beijing = await get('/luoz/support', { preCarNum: '京' });
		expect(beijing.data).toHaveLength(1);
		expect(beijing.data[0]).toMatchObject({ preCarNum: '京', province: '北京' });
	});

	it('answers the same violations for the same plate, with count as a string', async () => {
		const first = await get('/luoz/query', { carNumber: '京A12345', carType: '02' });
		const second = await get('/luoz/query', { carNumber: '京A12345', carType: '02' });
		expect(first).toEqual(second);
		expect(typeof first.data.count).toBe('string');
		expect(first.data.records).toHaveLength(Number(first.data.count));
	});

	it('masks vin, plate and engine number in vehicle detail', async () => {
		const detail = await get('/car/query', { carNumber: '京A12345', carType: '52' });
		for (const field of ['vin', 'plateNumber', 'engineNumber']) expect(detail.data[field]).toContain('*');
		expect((await get('/car/query', { carNumber: '京A12345', carType: '03' })).code).not.toBe(0);
	});

	it('nests enterprise detail under data.data, writes "-" for empty values and spells address as in the sample', async () => {
		const detail = await get('/enterprise/detail_info', { keyword: '北京示例科技有限公司' });
		expect(typeof detail.data.sign).toBe('string');
		expect(detail.data.data).toMatchObject({ name: '北京示例科技有限公司', term_end: '-', end_date: '-' });
		expect(detail.data.data.address).toBeDefined();
		expect(detail.data.data.addresses).toBeUndefined();
	});

	it('pages copyrights with defaults 1 and 10 and a total', async () => {
		const first = await get('/enterprise/copyright', { keyword: 'many works' });
		expect(first.data).toMatchObject({ pageIndex: 1, pageSize: 10, totalRecords: 47 });
		expect(first.data.data).toHaveLength(10);
		const last = await get('/enterprise/copyright', { keyword: 'many works', pageIndex: 5 });
		expect(last.data.data).toHaveLength(7);
	});

	it('answers not-found inputs with a non-zero code and bills enterprise lookups only when code is 0', async () => {
		expect((await get('/enterprise/detail_info', { keyword: '不存在的公司' })).code).not.toBe(0);
		expect((await get('/enterprise/copyright', { keyword: 'notfound' })).code).not.toBe(0);
		await get('/enterprise/detail_info', { keyword: '北京示例科技有限公司' });
		await get('/enterprise/copyright', { keyword: 'many works' });
		const ledger = emulator.ledger();
		expect(ledger.byPath['/enterprise/detail_info']).toMatchObject({ calls: 2, billedCalls: 1, costYuan: PRICES_YUAN.enterpriseDetail });
		expect(ledger.byPath['/enterprise/copyright']).toMatchObject({ calls: 2, billedCalls: 1, costYuan: PRICES_YUAN.enterpriseCopyright });
		expect(ledger.totals.calls).toBe(4);
	});

	it('gives a non-member 100 free telephone identifications a day, and a member no limit', async () => {
		for (let call = 0; call < 100; call++) expect((await get('/telecom/identify', { tel: '13800138000' })).code).toBe(0);
		const over = await get('/telecom/identify', { tel: '13800138000' });
		expect(over.code).not.toBe(0);
		expect(over.message).toMatch(/quota/);
		for (let call = 0; call < 101; call++) expect((await get('/telecom/identify', { tel: '13800138000' }, emulator.demo.memberAppCode)).code).toBe(0);
		const ledger = emulator.ledger();
		expect(ledger.byPath['/telecom/identify']).toMatchObject({ calls: 202, billedCalls: 0, costYuan: 0 });
	});

	it('identifies a landline and flags numbers with HTML in countDesc', async () => {
		const answer = await get('/telecom/identify', { tel: '01012345678' });
		expect(answer.data).toMatchObject({ phone: '01012345678' });
		expect([0, 1]).toContain(answer.data.iszhapian);
	});
});

describe('signatures and templates (docs/gateway-api.md#states)', () => {
	const statusOf = async (kind: 'sign' | 'template', id: string) => (await get(`/sms/query_${kind}`, { id })).data?.status;

	it.each(['sign', 'template'] as const)('%s: rejected -> modify -> under review -> result, with one callback per review', async (kind) => {
		const created =
			kind === 'sign'
				? await get('/sms/add_sign', { name: '测试签名', remark: '测试用' })
				: await get('/sms/add_template', { name: '贷款', content: '贷款优惠${code}', remark: 'x' });
		const id = created.data.id;
		expect(created.data.status).toBeUndefined(); // the create answer has no status (docs/gateway-api.md#open-points)
		expect(await statusOf(kind, id)).toBe(0);
		await finish('reviews', id);
		expect(await statusOf(kind, id)).toBe(2);
		expect((await get(`/sms/query_${kind}`, { id })).data.error).toBeTruthy();
		await until(() => received.length, (count) => count >= 1); // the first callback lands before the second is sent

		const fixed =
			kind === 'sign'
				? await get('/sms/modify_sign', { id, name: '数据网关', remark: '验证码' })
				: await get('/sms/modify_template', { id, name: '通知', content: '您的验证码是${code}', remark: '验证码' });
		expect(fixed.code).toBe(0);
		expect(await statusOf(kind, id)).toBe(0);
		await finish('reviews', id);
		expect(await statusOf(kind, id)).toBe(1);

		const action = kind === 'sign' ? 'sign' : 'template';
		await until(() => received.length, (count) => count >= 2);
		expect(received.map((callback) => callback.body.action)).toEqual([action, action]);
		expect(received.map((callback) => callback.body.sign.status)).toEqual([2, 1]);
		expect(received[0].headers['x-service-event']).toBe('sms');

		const refused = await get(`/sms/modify_${kind}`, { id, name: 'x', remark: 'y', content: 'z' });
		expect(refused.code).not.toBe(0);
		expect(refused.message).toMatch(/delete it and create a new one/);
	});

	it.each(['sign', 'template'] as const)('%s: approved and rejected ones are deleted; one under review is refused (docs/gateway-api.md#states, strictly)', async (kind) => {
		const create = (name: string) =>
			kind === 'sign' ? get('/sms/add_sign', { name, remark: 'r' }) : get('/sms/add_template', { name: 'n', content: name, remark: 'r' });
		const underReview = (await create('审核中')).data.id;
		const refused = await get(`/sms/delete_${kind}`, { id: underReview });
		expect(refused.code).toBe(40004);
		expect(refused.message).toMatch(/under review and cannot be deleted/);
		expect(await statusOf(kind, underReview)).toBe(0); // still there
		const approved = (await create('正常内容')).data.id;
		const rejected = (await create(kind === 'sign' ? 'test' : 'lottery')).data.id;
		await finish('reviews', approved, rejected, underReview);
		expect(await statusOf(kind, approved)).toBe(1);
		expect(await statusOf(kind, rejected)).toBe(2);
		for (const id of [approved, rejected, underReview]) {
			const deleted = await get(`/sms/delete_${kind}`, { id });
			expect(deleted).toEqual({ code: 0, message: 'success' }); // no data for deletes
			expect((await get(`/sms/query_${kind}`, { id })).code).not.toBe(0);
		}
	});
});

describe('SMS send', () => {
	it('is refused with an unapproved signature or template', async () => {
		const signature = (await get('/sms/add_sign', { name: '新签名', remark: 'r' })).data.id;
		const template = (await get('/sms/add_template', { name: 'n', content: '新模板${code}', remark: 'r' })).data.id;
		const { signatureId, templateId } = emulator.demo;
		expect((await get('/sms/send', { signId: signature, templateId, phone: '13900000010', params: '{"code":"1"}' })).message).toMatch(/signature/);
		expect((await get('/sms/send', { signId: signatureId, templateId: template, phone: '13900000011', params: '{"code":"1"}' })).message).toMatch(/template/);
	});

	it('checks variables: params for a template without variables, reserved or bad names, long values', async () => {
		const { signatureId, templateId, templateWithoutVariablesId } = emulator.demo;
		const send = (template: string, params: string, phone: string) => get('/sms/send', { signId: signatureId, templateId: template, phone, params });
		expect((await send(templateWithoutVariablesId, '{"code":"1"}', '13900000020')).message).toMatch(/variable/);
		expect((await send(templateId, '{"mobile":"1"}', '13900000021')).message).toMatch(/variable/);
		expect((await send(templateId, '{"code1":"1"}', '13900000022')).message).toMatch(/variable/);
		expect((await send(templateId, JSON.stringify({ code: 'x'.repeat(51) }), '13900000023')).message).toMatch(/variable/);
		expect((await get('/sms/send', { signId: signatureId, templateId: templateWithoutVariablesId, phone: '13900000024' })).code).toBe(0);
	});

	it('limits sends per number: 1 a minute by default', async () => {
		const { signatureId, templateId } = emulator.demo;
		const send = () => get('/sms/send', { signId: signatureId, templateId, phone: '13900000030', params: '{"code":"1234"}' });
		expect((await send()).code).toBe(0);
		const second = await send();
		expect(second.code).not.toBe(0);
		expect(second.message).toMatch(/per minute/);
	});

	it('delivers asynchronously, reports once, and bills delivered segments (70 / 67 rule, signature included)', async () => {
		const { signatureId } = emulator.demo;
		// 【数据网关】 has 6 characters with its brackets; 64 + 6 = 70 is one segment, 65 + 6 = 71 is two.
		const short = (await get('/sms/add_template', { name: 'n', content: 'a'.repeat(64), remark: 'r' })).data.id;
		const long = (await get('/sms/add_template', { name: 'n', content: 'b'.repeat(65), remark: 'r' })).data.id;
		await finish('reviews', short, long);
		for (const id of [short, long]) expect((await get('/sms/query_template', { id })).data.status).toBe(1);
		await until(() => received.length, (count) => count >= 2);
		emulator.resetLedger();
		received.length = 0;
		const first = (await get('/sms/send', { signId: signatureId, templateId: short, phone: '13900000040' })).data.id;
		const second = (await get('/sms/send', { signId: signatureId, templateId: long, phone: '13900000041' })).data.id;
		expect((await get('/sms/query_status', { id: first })).data.status).toBe(0);
		await finish('deliveries', first, second);
		const final = await get('/sms/query_status', { id: second });
		expect(final.data).toMatchObject({ status: 1, phone: 13900000041 });
		expect(final.data.reveiveDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
		const reportsOf = () => received.filter((callback) => callback.body.action === 'report' && [first, second].includes(callback.body.sms.id));
		await until(reportsOf, (reports) => reports.length >= 2);
		// Finishing again sends nothing more: each task reports once, and the 2 reports landed before this answer.
		await finish('deliveries', first, second);
		const reports = reportsOf();
		expect(reports.map((callback) => callback.body.sms.id).sort()).toEqual([first, second].sort());
		expect(reports[0].body.sms.receiveDate).toBeTruthy();
		const sendTotals = emulator.ledger().byPath['/sms/send'];
		expect(sendTotals).toMatchObject({ calls: 2, billedCalls: 2, deliveredSegments: 3 });
		expect(sendTotals.costYuan).toBeCloseTo(3 * PRICES_YUAN.smsSegment);
	});

	it('gives the task IDs it is told to, to any account; each account sees only its own task under that ID', async () => {
		const { signatureId, templateId, appCode, memberAppCode } = emulator.demo;
		emulator.configure({ nextTaskIds: ['T-same', 'T-same'] });
		const sendAs = (code: string, phone: string) => get('/sms/send', { signId: signatureId, templateId, phone, params: '{"code":"1"}' }, code);
		expect((await sendAs(appCode, '13900000060')).data.id).toBe('T-same');
		expect((await sendAs(memberAppCode, '13900000061')).data.id).toBe('T-same');
		expect((await sendAs(appCode, '13900000062')).data.id).not.toBe('T-same');
		expect((await get('/sms/query_status', { id: 'T-same' }, appCode)).data.phone).toBe(13900000060);
		expect((await get('/sms/query_status', { id: 'T-same' }, memberAppCode)).data.phone).toBe(13900000061);
	});

	it('does not bill failed deliveries', async () => {
		emulator.configure({ deliveryFailureShare: 1 });
		try {
			const { signatureId, templateId } = emulator.demo;
			const id = (await get('/sms/send', { signId: signatureId, templateId, phone: '13900000050', params: '{"code":"1234"}' })).data.id;
			await finish('deliveries', id);
			const final = await get('/sms/query_status', { id });
			expect(final.data.status).toBe(-1);
			expect(emulator.ledger().byPath['/sms/send']).toMatchObject({ calls: 1, billedCalls: 0, costYuan: 0 });
		} finally {
			emulator.configure({ deliveryFailureShare: 0 });
		}
	});
});

describe('admin API and faults', () => {
	it('reads and resets the ledger over HTTP', async () => {
		await get('/car/query', { carNumber: '京A12345', carType: '02' });
		const ledger = (await (await fetch(`${emulator.url}/__emulator/ledger`)).json()) as { totals: { billedCalls: number; costYuan: number } };
		expect(ledger.totals).toMatchObject({ billedCalls: 1, costYuan: PRICES_YUAN.vehicleDetail });
		await fetch(`${emulator.url}/__emulator/ledger`, { method: 'DELETE' });
		expect(emulator.ledger().totals.calls).toBe(0);
	});

	it('records notifications posted to it, lists them and forgets them on DELETE', async () => {
		const url = `${emulator.url}/__emulator/notifications`;
		await fetch(url, { method: 'DELETE' });
		const posted = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ outcome: 'delivered', taskId: 't1' }) });
		expect(posted.status).toBe(200);
		await fetch(url, { method: 'POST', body: 'plain words' });
		const listed = (await (await fetch(url)).json()) as Array<{ receivedAt: string; body: unknown }>;
		expect(listed.map((note) => note.body)).toEqual([{ outcome: 'delivered', taskId: 't1' }, 'plain words']);
		expect(Number.isNaN(Date.parse(listed[0].receivedAt))).toBe(false);
		expect(emulator.notifications()).toHaveLength(2);
		await fetch(url, { method: 'DELETE' });
		expect(await (await fetch(url)).json()).toEqual([]);
	});

	it('answers 429 with Retry-After above the rate cap, and counts the rejections', async () => {
		// A window of a minute: the 5 calls hit the cap however slowly this machine makes them.
		await fetch(`${emulator.url}/__emulator/faults`, { method: 'PUT', body: JSON.stringify({ rateCapPerSecond: 3, rateCapWindowMs: 60_000 }) });
		const statuses = [];
		for (let call = 0; call < 5; call++) {
			const response = await fetch(`${emulator.url}/luoz/support?appCode=${emulator.demo.appCode}`);
			statuses.push([response.status, response.headers.get('retry-after')]);
		}
		expect(statuses.slice(0, 3).map(([status]) => status)).toEqual([200, 200, 200]);
		expect(statuses[3][0]).toBe(429);
		expect(Number(statuses[3][1])).toBeGreaterThanOrEqual(1);
		expect(Number(statuses[3][1])).toBeLessThanOrEqual(60);
		expect(emulator.ledger().totals).toMatchObject({ calls: 5, rejected429: 2 });
	});

	it('injects 500, 429, malformed JSON and HTML pages in sequence', async () => {
		emulator.setFaults({ sequence: [{ kind: '500' }, { kind: '429', retryAfterSeconds: 2 }, { kind: 'malformed' }, { kind: 'html' }] });
		const url = `${emulator.url}/luoz/support?appCode=${emulator.demo.appCode}`;
		const first = await fetch(url);
		expect(first.status).toBe(500);
		const second = await fetch(url);
		expect([second.status, second.headers.get('retry-after')]).toEqual([429, '2']);
		await expect((await fetch(url)).json()).rejects.toThrow();
		expect(await (await fetch(url)).text()).toMatch(/<html>/);
		expect((await fetch(url)).status).toBe(200);
	});
});
