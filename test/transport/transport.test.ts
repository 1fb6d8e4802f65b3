import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ICredentialTestFunctions } from 'n8n-workflow';

import { testGatewayCredential } from '../../nodes/shared/transport/clientForNode';
import { toNodeApiError } from '../../nodes/shared/errors/failures';
import { limiterFor } from '../../nodes/shared/limits/limiter';
import { telephoneIdentitySchema } from '../../nodes/shared/gateway/schemas/telephone';
import { beforeGuard, callsTo, client, emulator, failureOf, node, passthrough, plate, useEmulator } from './gatewayClient';

useEmulator();

describe('gateway transport against the emulator over HTTP', () => {
	it('a Base URL with a path prefix keeps it; one that is not a URL fails at once, naming the field', async () => {
		const prefixed = await failureOf(client({ baseUrl: `${emulator.url}/api`, maxRetries: 0 }).call('telephoneIdentify', { tel: '13800138000' }, passthrough));
		expect(prefixed.httpStatus).toBe(404); // the emulator serves the root only: the prefix reached it
		const broken = await failureOf(client({ baseUrl: 'gateway.example.com' }).call('telephoneIdentify', { tel: '13800138000' }, passthrough));
		expect(broken.message).toBe('the Base URL "gateway.example.com" is not a valid URL');
		expect(broken.hint).toMatch(/Base URL in the credential/);
	});

	it('returns the parsed data of a successful call', async () => {
		const answer = await client().call('telephoneIdentify', { tel: '13800138000' }, telephoneIdentitySchema);
		expect(answer.data.phone).toBe('13800138000');
		expect(answer.attempts).toBe(1);
	});

	it('turns code != 0 into an error carrying the gateway code, its message and the item index', async () => {
		const failure = await failureOf(client({ appCode: 'not-a-real-code' }).call('telephoneIdentify', { tel: '13800138000' }, passthrough));
		expect(failure.kind).toBe('gateway-code');
		expect(failure.gatewayCode).not.toBe(0);
		const error = toNodeApiError(node, failure, 4);
		expect(error.message).toMatch(/^Identify Telephone Number failed: gateway code \d+: .+/);
		expect(error.context.itemIndex).toBe(4);
	});

	it('retries an HTTP 500 on a lookup and the gateway bills it once', async () => {
		await emulator.setFaults({ sequence: [{ kind: '500', count: 1 }] });
		const answer = await client().call('vehicleDetail', plate, passthrough);
		expect(answer.attempts).toBe(2);
		const calls = await callsTo('/car/query');
		expect(calls.billedCalls).toBe(1);
	});

	it('waits for Retry-After after a 429, then succeeds', async () => {
		await emulator.setFaults({ sequence: [{ kind: '429', count: 1, retryAfterSeconds: 1 }] });
		const started = Date.now();
		const answer = await client().call('violationQuery', plate, passthrough);
		expect(answer.attempts).toBe(2);
		// A lower bound: the retry must not come before the gateway allowed it.
		expect(Date.now() - started).toBeGreaterThanOrEqual(950);
	});

	it('a Retry-After longer than an item may wait fails that item at once, naming it, and does not stall the credential', async () => {
		// Its own credential (a different Base URL spelling), so the pause touches no other test.
		const baseUrl = `${emulator.url}/`;
		const settings = { baseUrl, timeoutMs: 2000, maxRetries: 3 };
		await emulator.setFaults({ sequence: [{ kind: '429', count: 1, retryAfterSeconds: 3600 }] });
		const first = await failureOf(client(settings).call('violationSupport', {}, passthrough));
		expect(first.httpStatus).toBe(429);
		expect(first.message).toMatch(/asked to wait 3600 s \(Retry-After\), longer than this item may wait/);
		expect(first.retryAfterMs).toBe(3_600_000);
		// The shared pause lasts at most what a call would wait, not the hour.
		const limiter = limiterFor(baseUrl, emulator.demo.memberAppCode, { maxConcurrent: 4, maxPerSecond: 0 });
		expect(limiter.pausedForMs).toBeLessThanOrEqual(2000);
		// An hour's Retry-After is a quota's, not a pace: the limiter learned no rate from it (issue 33 item 12).
		expect(limiter.ratePerSecond).toBe(Number.POSITIVE_INFINITY);
		// Another execution with the same credential goes on; the far-off guard shows it did not wait an hour.
		const second = await beforeGuard(client(settings).call('violationSupport', {}, passthrough), 30_000);
		expect(second.attempts).toBe(1);
	}, 40_000);

	it('the credential test never waits behind a pause caused by a 429', async () => {
		const appCode = 'paused-account-code';
		await emulator.setFaults({ sequence: [{ kind: '429', count: 1, retryAfterSeconds: 3600 }] });
		await failureOf(client({ appCode, timeoutMs: 60_000, maxRetries: 0 }).call('violationSupport', {}, passthrough));
		expect(limiterFor(emulator.url, appCode, { maxConcurrent: 4, maxPerSecond: 0 }).pausedForMs).toBeGreaterThan(10_000);
		const result = await beforeGuard(
			testGatewayCredential.call({} as ICredentialTestFunctions, {
				id: '1',
				name: 'gateway',
				type: 'dataGatewayApi',
				data: { appCodeSecret: appCode, baseUrl: emulator.url, timeoutSeconds: 60 },
			}),
			10_000,
		);
		// An answer at once: this code is unknown to the emulator, so it is refused.
		expect(result).toMatchObject({ status: 'Error', message: expect.stringMatching(/refused the appCode/) });
	}, 20_000);

	it.each([
		['malformed', /JSON that is malformed or cut off/],
		['html', /an HTML page instead of JSON/],
		['truncated', /cut off/],
	] as const)('reports a %s answer as a readable error naming the operation, without retrying', async (kind, text) => {
		await emulator.setFaults({ sequence: [{ kind, count: 1 }] });
		const failure = await failureOf(client().call('enterpriseDetail', { keyword: '北京示例科技有限公司' }, passthrough));
		expect(failure.kind).toBe('not-json');
		expect(failure.message).toMatch(text);
		expect(toNodeApiError(node, failure, 0).message).toMatch(/^Get Enterprise Detail failed: /);
		expect((await callsTo('/enterprise/detail_info')).calls).toBe(1);
	});

	it('reports an HTML error page with a 5xx status after the retries are used up', async () => {
		await emulator.setFaults({ sequence: [{ kind: '502', count: 5 }] });
		const failure = await failureOf(client({ maxRetries: 1 }).call('violationSupport', {}, passthrough));
		expect(failure.kind).toBe('http-status');
		expect(failure.httpStatus).toBe(502);
		expect(toNodeApiError(node, failure, 0).message).toMatch(/^Get Violation Support Rules failed: the gateway answered HTTP 502/);
	});

	it('retries a connection reset on a lookup', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'reset', count: 1 }] });
		const answer = await client().call('telephoneIdentify', { tel: '13800138001' }, passthrough);
		expect(answer.attempts).toBe(2);
	});

	it('reports a connection reset in words, the code after them, once retries are off', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'reset', count: 1 }] });
		const failure = await failureOf(client({ maxRetries: 0 }).call('telephoneIdentify', { tel: '13800138001' }, passthrough));
		expect(failure.kind).toBe('network');
		expect(failure.message).toMatch(/^the connection was closed by the gateway before it answered \((ECONNRESET|UND_ERR_SOCKET)\)$/);
	});

	it('reports a refused connection in words, the code after them', async () => {
		const closed = createServer();
		await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
		const port = (closed.address() as AddressInfo).port;
		await new Promise((resolve) => closed.close(resolve));
		const failure = await failureOf(client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 }).call('telephoneIdentify', { tel: '13800138001' }, passthrough));
		expect(failure.message).toBe('the gateway refused the connection: nothing answers at the host and port of the Base URL (ECONNREFUSED)');
	});

	it('gives up after the timeout', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'hang', count: 1 }] });
		// Its own limiter: the rate learned from earlier 429s could space starts further apart than this Timeout.
		const failure = await failureOf(client({ timeoutMs: 300, maxRetries: 0 }, { ownLimiter: true }).call('telephoneIdentify', { tel: '13800138002' }, passthrough));
		expect(failure.kind).toBe('timeout');
		expect(failure.message).toBe('no answer after 1 attempt over 0.3 s');
	});

	it('the Timeout bounds the whole call of an item, retries included: a hung gateway gets one attempt, and the error says so', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'hang', count: 10 }] });
		const failure = await failureOf(client({ timeoutMs: 600, maxRetries: 3 }).call('telephoneIdentify', { tel: '13800138002' }, passthrough));
		expect(failure.kind).toBe('timeout');
		expect(failure.message).toBe('no answer after 1 attempt over 0.6 s');
		// Before, each of the 4 attempts waited the whole Timeout.
		expect((await callsTo('/telecom/identify')).calls).toBe(1);
	});

	it('retries only while time remains, and the error counts the attempts', async () => {
		await emulator.setFaults({ sequence: [{ kind: '500', count: 20 }] });
		const failure = await failureOf(client({ timeoutMs: 1000, maxRetries: 10 }).call('telephoneIdentify', { tel: '13800138002' }, passthrough));
		expect(failure.httpStatus).toBe(500);
		const attempts = (await callsTo('/telecom/identify')).calls;
		// Backoff waits are at least 250, 500 and 1000 ms: no more than 3 attempts fit in 1 s.
		expect(attempts).toBeGreaterThanOrEqual(1);
		expect(attempts).toBeLessThanOrEqual(3);
		if (attempts > 1) expect(failure.message).toMatch(new RegExp(`\\(${attempts} attempts over \\d+(\\.\\d)? s\\)$`));
	});

	it('a retry the rate limit would start after the Timeout is not waited for: the last failure stands', async () => {
		await emulator.setFaults({ sequence: [{ kind: '500', count: 1 }] });
		// One call every 4 s, and 1 s for the whole item: the retry could not start in time.
		const failure = await failureOf(
			client({ timeoutMs: 1000, maxRetries: 3, limiter: { maxConcurrent: 4, maxPerSecond: 0.25 } }, { ownLimiter: true }).call('telephoneIdentify', { tel: '13800138002' }, passthrough),
		);
		expect(failure.httpStatus).toBe(500);
		expect(failure.message).toMatch(/^the gateway answered HTTP 500/);
		expect((await callsTo('/telecom/identify')).calls).toBe(1);
	});

	it('stops waiting when the execution is cancelled', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'hang', count: 1 }] });
		const controller = new AbortController();
		const call = client().call('telephoneIdentify', { tel: '13800138003' }, passthrough, { signal: controller.signal });
		setTimeout(() => controller.abort(), 100);
		const failure = await failureOf(call);
		expect(failure.kind).toBe('cancelled');
	});

	it('never retries an SMS send after a 500', async () => {
		await emulator.setFaults({ sequence: [{ kind: '500', count: 1, path: '/sms/send' }] });
		const failure = await failureOf(
			client({ appCode: emulator.demo.appCode }).call(
				'smsSend',
				{ signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: '13900000001', params: { code: '1234' } },
				passthrough,
			),
		);
		expect(failure.kind).toBe('http-status');
		expect((await callsTo('/sms/send')).calls).toBe(1);
	});

	it('never retries an SMS send after a reset, and says the outcome is unknown', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'reset', count: 1, path: '/sms/send' }] });
		const failure = await failureOf(
			client({ appCode: emulator.demo.appCode }).call(
				'smsSend',
				{ signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: '13900000002', params: { code: '1234' } },
				passthrough,
			),
		);
		expect(failure.kind).toBe('outcome-unknown');
		expect(failure.hint).toMatch(/not repeated/);
		expect((await callsTo('/sms/send')).calls).toBe(1);
	});
});
