import type { IDataObject } from 'n8n-workflow';

import { post, report, serve, serveEachTest, signature, started } from './callbacks';

serveEachTest();

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
