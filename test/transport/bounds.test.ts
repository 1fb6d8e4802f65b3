/**
 * Issue 25, items 2-4: whatever a server (the gateway or the shared limit's Redis) does, an attempt
 * ends by its Timeout and holds no more than MAX_ANSWER_BYTES of answer. Bounds on elapsed time are
 * generous guards (the slow behaviours they catch take 10 s to forever), never measurements.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';

import { MAX_ANSWER_BYTES } from '../../nodes/shared/transport/pool';
import { callCertainlyFailed } from '../../nodes/shared/state/executionMemory';
import { closeAllRedis, resetConnectionPool } from '../../nodes/shared/testing';
import { beforeGuard, callsTo, client, emulator, failureOf, passthrough, useEmulator } from './gatewayClient';

useEmulator();

const servers: Server[] = [];
afterAll(() => {
	closeAllRedis();
	servers.forEach((server) => server.close());
});

/** Slack over the Timeout that the guards allow: the 0.5 s, plus room for a loaded 2-core machine. */
const SLACK_MS = 1000;

describe('the Timeout bounds each attempt from the request to the last byte', () => {
	it.each([
		['a body that trickles one byte every 400 ms', { kind: 'trickle' as const }],
		['a body that never ends', { kind: 'endless' as const }],
	])('%s: a lookup ends at its Timeout as a timeout, and is not retried past it', async (_label, fault) => {
		await emulator.setFaults({ sequence: [{ ...fault, count: 5 }] });
		const failure = await beforeGuard(failureOf(client({ timeoutMs: 1000, maxRetries: 3 }).call('telephoneIdentify', { tel: '13800138010' }, passthrough)), 1000 + SLACK_MS);
		expect(failure.kind).toBe('timeout');
		expect(failure.message).toBe('no answer after 1 attempt over 1 s');
		expect(failure.hint).toMatch(/Raise "Timeout \(Seconds\)"/);
		expect((await callsTo('/telecom/identify')).calls).toBe(1);
	});

	it('an SMS send whose answer trickles ends at its Timeout, said to be of unknown outcome (never sent again)', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'trickle', path: '/sms/send' }] });
		const send = client({ appCode: emulator.demo.appCode, timeoutMs: 1000 }).call(
			'smsSend',
			{ signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: '13900000071', params: { code: '1234' } },
			passthrough,
		);
		const failure = await beforeGuard(failureOf(send), 1000 + SLACK_MS);
		expect(failure.kind).toBe('outcome-unknown');
		expect(failure.message).toBe('no answer within 1 s; the request may have reached the gateway');
		expect(callCertainlyFailed(failure)).toBe(false);
	});

	it('a cancelled execution ends an attempt whose body is still arriving', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'trickle' }] });
		const cancel = new AbortController();
		const call = failureOf(client({ timeoutMs: 30_000 }).call('telephoneIdentify', { tel: '13800138015' }, passthrough, { signal: cancel.signal }));
		// Cancelled once the request has reached the gateway, whose answer trickles for seconds; the Timeout is far off.
		await beforeGuard(
			(async () => {
				while ((await callsTo('/telecom/identify')).calls === 0) await new Promise((resolve) => setImmediate(resolve));
			})(),
			5000,
		);
		cancel.abort();
		const failure = await beforeGuard(call, 5000);
		expect(failure.kind).toBe('cancelled');
		expect(failure.message).toBe('the execution was cancelled');
	});

	it('a quick answer after a slow one: the deadline of one attempt never touches the next', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'hang', count: 1 }] });
		const slow = await failureOf(client({ timeoutMs: 300, maxRetries: 0 }).call('telephoneIdentify', { tel: '13800138011' }, passthrough));
		expect(slow.kind).toBe('timeout');
		const answer = await client({ timeoutMs: 300 }).call('telephoneIdentify', { tel: '13800138011' }, passthrough);
		expect(answer.attempts).toBe(1);
	});
});

describe('the Timeout bounds an attempt that never gets to send its request', () => {
	const saved = process.env.HTTPS_PROXY;
	afterEach(async () => {
		if (saved === undefined) delete process.env.HTTPS_PROXY;
		else process.env.HTTPS_PROXY = saved;
		await resetConnectionPool();
	});

	it('a proxy that takes the connection and never answers its CONNECT: the call ends at its Timeout, and an SMS is said never sent (safe to send again)', async () => {
		// Takes the TCP connection and says nothing: the tunnel to the gateway never opens, so the request is never written.
		const silent = createServer(() => undefined).listen(0, '127.0.0.1');
		servers.push(silent);
		await new Promise((resolve) => silent.once('listening', resolve));
		process.env.HTTPS_PROXY = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
		await resetConnectionPool();

		const lookup = client({ baseUrl: 'https://127.0.0.1:9', timeoutMs: 1000, maxRetries: 0 }).call('telephoneIdentify', { tel: '13800138016' }, passthrough);
		const failure = await beforeGuard(failureOf(lookup), 1000 + SLACK_MS);
		expect(failure.kind).toBe('not-sent');
		expect(failure.message).toBe('not sent: no connection to the gateway within 1 s, so the request was never sent');

		const send = client({ baseUrl: 'https://127.0.0.1:9', appCode: emulator.demo.appCode, timeoutMs: 1000, maxRetries: 0 }).call(
			'smsSend',
			{ signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: '13900000072', params: { code: '1234' } },
			passthrough,
		);
		const sendFailure = await beforeGuard(failureOf(send), 1000 + SLACK_MS);
		expect(sendFailure.message).toMatch(/never sent/);
		expect(callCertainlyFailed(sendFailure)).toBe(true);
	});
});

describe(`answers are read up to ${MAX_ANSWER_BYTES / 1024 / 1024} MB`, () => {
	it.each([
		['announced by its length', false],
		['sent without a length', true],
	])('a larger answer %s fails the item with a clear error, and is not asked again', async (_label, chunked) => {
		await emulator.setFaults({ sequence: [{ kind: 'huge', sizeBytes: MAX_ANSWER_BYTES + 1024 * 1024, chunked, count: 5 }] });
		const failure = await failureOf(client({ maxRetries: 3 }).call('enterpriseDetail', { keyword: '北京示例科技有限公司' }, passthrough));
		expect(failure.kind).toBe('not-json');
		expect(failure.message).toBe("the gateway's answer (HTTP 200) is larger than 8 MB, far above any real answer; it was not read further");
		expect(failure.hint).toMatch(/not repeated automatically/);
		expect((await callsTo('/enterprise/detail_info')).calls).toBe(1);
	});

	it('an answer just under the cap is read whole (here: a body of spaces, which is not JSON)', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'huge', sizeBytes: MAX_ANSWER_BYTES - 1024, chunked: true }] });
		const failure = await failureOf(client({ maxRetries: 0 }).call('enterpriseDetail', { keyword: '北京示例科技有限公司' }, passthrough));
		expect(failure.message).toBe('the gateway answered HTTP 200 with an empty body instead of JSON');
	});
});

/** A Redis-like TCP server: INFO as Redis answers it, every other command with `reply`. */
async function redisAnswering(reply: string): Promise<string> {
	const info = 'redis_version:7.0.0\r\nloading:0';
	const server = createServer((socket) => {
		socket.on('error', () => undefined);
		socket.on('data', (chunk) => {
			const commands = chunk.toString('latin1').match(/\*\d+\r\n\$\d+\r\n[A-Za-z]+/g) ?? [];
			const answer = commands.map((command) => (command.split('\r\n')[2].toUpperCase() === 'INFO' ? `$${info.length}\r\n${info}\r\n` : reply)).join('');
			if (answer) socket.write(answer);
		});
	});
	servers.push(server);
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	return `redis://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('every wait is bounded by the Timeout', () => {
	it('a wait of 23 days from the shared rate in Redis fails at once: not sent, and why', async () => {
		const url = await redisAnswering(':2000000000\r\n');
		const failure = await beforeGuard(
			failureOf(client({ appCode: 'redis-wait-code', timeoutMs: 5000, limiter: { maxConcurrent: 4, maxPerSecond: 0, sharedRedis: { url } } }).call('telephoneIdentify', { tel: '13800138012' }, passthrough)),
			4000,
		);
		expect(failure.kind).toBe('not-sent');
		expect(callCertainlyFailed(failure)).toBe(true);
		expect(failure.message).toBe(
			// 2,000,000,000 ms is 23.15 days: a wait is rounded up, so that it never reads shorter than it is.
			'not sent: calls with this credential are held back for another 23.2 days by the rate shared through Redis, longer than this item may wait (Timeout 5 s)',
		);
		expect(failure.hint).toMatch(/^Nothing reached the gateway\. .*"Shared Redis URL for Limits and Send Records"/);
		expect((await callsTo('/telecom/identify')).calls).toBe(0);
	});

	it('a free slot that does not come within the Timeout is not waited for', async () => {
		await emulator.setFaults({ sequence: [{ kind: 'hang', count: 1 }] });
		// One slot, held by a call whose answer never comes (its own Timeout is long; it is cancelled at the end).
		const holder = new AbortController();
		const held = failureOf(client({ appCode: 'slot-wait-code', timeoutMs: 60_000, limiter: { maxConcurrent: 1, maxPerSecond: 0 } }).call('telephoneIdentify', { tel: '13800138013' }, passthrough, { signal: holder.signal }));
		const failure = await beforeGuard(
			failureOf(client({ appCode: 'slot-wait-code', timeoutMs: 500, limiter: { maxConcurrent: 1, maxPerSecond: 0 } }).call('telephoneIdentify', { tel: '13800138014' }, passthrough)),
			500 + SLACK_MS,
		);
		holder.abort();
		expect((await held).kind).toBe('cancelled');
		expect(failure.kind).toBe('not-sent');
		expect(failure.message).toBe('not sent: the one call allowed at a time with this credential stayed busy for longer than this item may wait (Timeout 0.5 s)');
		expect(failure.hint).toMatch(/raise "Max Concurrent Requests"/);
		expect((await callsTo('/telecom/identify')).calls).toBe(1);
	});

	it("a first turn the credential's own rate would give after the Timeout is not waited for", async () => {
		// One call every 10 s: the second call's turn comes long after its Timeout of 1 s.
		const limited = client({ timeoutMs: 1000, limiter: { maxConcurrent: 4, maxPerSecond: 0.1 } }, { ownLimiter: true });
		await limited.call('violationSupport', {}, passthrough);
		const failure = await beforeGuard(failureOf(limited.call('violationSupport', {}, passthrough)), 5000);
		expect(failure.kind).toBe('not-sent');
		expect(failure.message).toMatch(/^not sent: calls with this credential are held back for another (9|10) s, longer than this item may wait \(Timeout 1 s\)$/);
		expect(failure.hint).toMatch(/Raise "Timeout \(Seconds\)" or "Max Requests per Second"/);
		expect((await callsTo('/luoz/support')).calls).toBe(1);
	});
});
