/**
 * Issue 18, item 2: a failure before the request leaves (the shared limit's Redis down, wrong or
 * not Redis at all, or a cancellation before dispatch) is "not sent", names the credential field to
 * fix, reaches no gateway, and no bytes a server sends crash or hang the process.
 */
import { rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { ICredentialTestFunctions } from 'n8n-workflow';
import { z } from 'zod/v4';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { testGatewayCredential } from '../../nodes/shared/transport/clientForNode';
import { GatewayFailure } from '../../nodes/shared/errors/failures';
import { redisTimeouts } from '../../nodes/shared/store/redis/connection';
import { callCertainlyFailed } from '../../nodes/shared/state/executionMemory';
import { GatewayClient } from '../../nodes/shared/transport/gatewayClient';
import type { GatewaySettings } from '../../nodes/shared/transport/settings';
import { closeAllRedis, resetConnectionPool } from '../../nodes/shared/testing';
import { freePort } from '../../scripts/n8n-runtime/run';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { startEmulator, type Emulator } from '../emulator/server';
import { codeVariable, sendParameters } from '../harness/sms';
import { makeSelfSignedCertificate } from '../harness/tlsCertificate';
import { runWorkflow } from '../harness/workflow';

jest.setTimeout(180_000);

let emulator: Emulator;
let redis: RunningRedis;
let tlsOnly: RunningRedis;
let certDir: string;
const servers: Server[] = [];
const defaults = { ...redisTimeouts };

beforeAll(async () => {
	const certificate = makeSelfSignedCertificate();
	certDir = certificate.dir;
	[emulator, redis, tlsOnly] = await Promise.all([
		startEmulator(),
		startRedis(() => undefined, { password: 'right-password' }),
		startRedis(() => undefined, { tls: { certFile: certificate.certFile, keyFile: certificate.keyFile } }),
	]);
});
afterAll(async () => {
	closeAllRedis();
	servers.forEach((server) => server.close());
	await Promise.all([emulator?.close(), redis?.stop(), tlsOnly?.stop(), resetConnectionPool()]);
	rmSync(certDir, { recursive: true, force: true });
});
beforeEach(() => emulator.resetLedger());

/** A TCP server on a free loopback port that answers each chunk it reads with `answer(chunk)` (nothing when undefined). */
async function fakeServer(answer: (chunk: Buffer, socket: Socket) => string | Buffer | undefined): Promise<string> {
	const server = createServer((socket) => {
		socket.on('error', () => undefined);
		socket.on('data', (chunk) => {
			const reply = answer(chunk, socket);
			if (reply !== undefined && !socket.destroyed) socket.write(reply);
		});
	});
	servers.push(server);
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	return `redis://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const INFO = 'redis_version:7.0.0\r\nloading:0';

/** Answers the connection's ready check (INFO) as Redis would, and every other command with `reply`. */
function redisLike(reply: string) {
	return (chunk: Buffer) => {
		const text = chunk.toString('latin1');
		const commands = text.match(/\*\d+\r\n\$\d+\r\n[A-Za-z]+/g) ?? [];
		return commands
			.map((command) => {
				const name = command.split('\r\n')[2].toUpperCase();
				if (name === 'INFO') return `$${INFO.length}\r\n${INFO}\r\n`;
				return reply;
			})
			.join('');
	};
}

let codeCounter = 0;

function smsClient(redisUrl: string, extra: Partial<GatewaySettings['limiter']> = {}, password?: string) {
	return new GatewayClient({
		baseUrl: emulator.url,
		// A credential of its own per call: the limiter and its Redis are per credential.
		appCode: `${emulator.demo.appCode}`,
		appCodePlacement: 'query',
		timeoutMs: 5000,
		maxRetries: 0,
		money: { capYuan: 0, dailyYuan: 0, monthlyYuan: 0 },
		limiter: { maxConcurrent: 4, maxPerSecond: 0, sharedRedis: { url: redisUrl, ...(password ? { password } : {}) }, ...extra },
	});
}

function sendOne(client: GatewayClient, signal?: AbortSignal) {
	codeCounter++;
	return client.call(
		'smsSend',
		{ signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: String(13900002000 + codeCounter), params: { code: String(1000 + codeCounter) } },
		z.unknown(),
		{ signal },
	);
}

async function failureOf(promise: Promise<unknown>): Promise<GatewayFailure> {
	const error = await promise.then(
		() => undefined,
		(caught: unknown) => caught,
	);
	if (!(error instanceof GatewayFailure)) throw new Error(`expected a GatewayFailure, got ${String(error)}`);
	return error;
}

const sendCalls = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;

function expectNotSent(failure: GatewayFailure, field: RegExp) {
	expect(failure.kind).toBe('not-sent');
	expect(callCertainlyFailed(failure)).toBe(true);
	expect(failure.message).toMatch(/^not sent: /);
	expect(failure.message).toMatch(field);
	expect(failure.hint).toMatch(/Nothing reached the gateway/);
	expect(sendCalls()).toBe(0);
}

describe('shared limit faults before an SMS leaves', () => {
	beforeAll(() => {
		// Every server here fails; short deadlines only make the suite quicker.
		redisTimeouts.connectMs = 1000;
		redisTimeouts.commandMs = 1000;
	});
	afterAll(() => Object.assign(redisTimeouts, defaults));

	const URL_FIELD = /"Shared Redis URL for Limits and Send Records": /;

	it('nothing listening', async () => {
		const url = `redis://127.0.0.1:${await freePort()}`;
		const failure = await failureOf(sendOne(smsClient(url)));
		expectNotSent(failure, URL_FIELD);
		expect(failure.message).toMatch(/nothing answers at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
	});

	it.each([
		['an http:// URL', 'http://127.0.0.1:6379', /must start with redis:\/\/ or rediss:\/\//],
		['a database that is not a number', 'redis://127.0.0.1:6379/zero', /the path must be a database number/],
	])('%s', async (_name, url, reason) => {
		const failure = await failureOf(sendOne(smsClient(url)));
		expectNotSent(failure, URL_FIELD);
		expect(failure.message).toMatch(reason);
	});

	it('an HTTP server', async () => {
		const server = createHttpServer((_request, response) => response.end('hello'));
		servers.push(server as unknown as Server);
		await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
		const failure = await failureOf(sendOne(smsClient(`redis://127.0.0.1:${(server.address() as AddressInfo).port}`)));
		expectNotSent(failure, URL_FIELD);
		expect(failure.message).toMatch(/did not answer as Redis/);
	});

	it('a TLS-only Redis port given as redis://', async () => {
		const failure = await failureOf(sendOne(smsClient(`redis://127.0.0.1:${tlsOnly.port}`)));
		expectNotSent(failure, URL_FIELD);
		expect(failure.message).toMatch(/if it is a TLS port, use rediss:\/\//);
	});

	it('a plain Redis port given as rediss://', async () => {
		const failure = await failureOf(sendOne(smsClient(redis.url.replace('redis://', 'rediss://'), {}, 'right-password')));
		expectNotSent(failure, URL_FIELD);
		expect(failure.message).toMatch(/if it is not a TLS port, use redis:\/\//);
	});

	it('a wrong password, which no message repeats', async () => {
		const failure = await failureOf(sendOne(smsClient(redis.url, {}, 'wrong-password-9')));
		expectNotSent(failure, /"Shared Redis Password": Redis at 127\.0\.0\.1:\d+ refused the login/);
		expect(`${failure.message} ${failure.hint}`).not.toMatch(/wrong-password-9|right-password/);
	});

	it('a password in the URL never shows in the message', async () => {
		const failure = await failureOf(sendOne(smsClient(`redis://user:url-secret-4@127.0.0.1:${await freePort()}/3`)));
		expectNotSent(failure, URL_FIELD);
		expect(`${failure.message} ${failure.hint}`).not.toContain('url-secret-4');
	});

	it.each([
		['a non-RESP first byte', () => 'hello there\r\n'],
		['binary garbage', () => Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0d, 0x0a])],
		['a bad bulk length', () => '$abc\r\n'],
		['a bulk string longer than it says', () => '$3\r\nabcdef\r\n'],
		['nothing at all', () => undefined],
	])('a server answering with %s', async (_name, reply) => {
		const failure = await failureOf(sendOne(smsClient(await fakeServer(reply))));
		expectNotSent(failure, URL_FIELD);
	});

	it('a server that closes every connection at once', async () => {
		const failure = await failureOf(sendOne(smsClient(await fakeServer((_chunk, socket) => void socket.destroy()))));
		expectNotSent(failure, URL_FIELD);
	});

	it.each([
		['a string', '+hello\r\n'],
		['an error', '-ERR unknown command\r\n'],
		['an array', '*1\r\n:5\r\n'],
	])('a Redis-like server answering the rate script with %s', async (_name, reply) => {
		const failure = await failureOf(sendOne(smsClient(await fakeServer(redisLike(reply)))));
		expectNotSent(failure, URL_FIELD);
	});

	it('a reply nobody asked for: the call that got its answer goes on, and the next call opens a new connection', async () => {
		let connections = 0;
		const answer = redisLike(':0\r\n+stray\r\n');
		const url = await fakeServer((chunk, socket) => {
			if (!(socket as Socket & { counted?: boolean }).counted) {
				(socket as Socket & { counted?: boolean }).counted = true;
				connections++;
			}
			return answer(chunk);
		});
		const client = smsClient(url);
		await sendOne(client);
		await sendOne(client);
		expect(sendCalls()).toBe(2);
		expect(connections).toBe(2);
	});

	it('a cancellation before the call asked Redis', async () => {
		const cancelled = new AbortController();
		cancelled.abort();
		expectNotSent(await failureOf(sendOne(smsClient(redis.url, {}, 'right-password'), cancelled.signal)), /^not sent: the execution was cancelled before the request left$/);
	});

	it('a cancellation while waiting for a free slot; the call already out stays "cancelled", which may have been sent', async () => {
		emulator.setFaults({ sequence: [{ kind: 'hang', count: 1, path: '/sms/send' }] });
		const client = smsClient(redis.url, { maxConcurrent: 1 }, 'right-password');
		const first = new AbortController();
		const second = new AbortController();
		const out = failureOf(sendOne(client, first.signal));
		// The first call holds the only slot from its start, so the second waits for it.
		const waiting = failureOf(sendOne(client, second.signal));
		second.abort();
		const waited = await waiting;
		expect(waited.kind).toBe('not-sent');
		expect(callCertainlyFailed(waited)).toBe(true);
		expect(waited.message).toBe('not sent: the execution was cancelled before the request left');
		first.abort();
		// The first was cancelled before or after it was written, depending on where it was: only the latter may have been sent.
		const outcome = await out;
		expect(['not-sent', 'cancelled']).toContain(outcome.kind);
		expect(sendCalls()).toBe(outcome.kind === 'cancelled' ? 1 : 0);
		emulator.clearFaults();
	});
});

describe('the credential test', () => {
	const test = (sharedLimitRedisUrl: string, sharedLimitRedisPassword = 'right-password') =>
		testGatewayCredential.call({} as ICredentialTestFunctions, {
			id: '1',
			name: 'gateway',
			type: 'dataGatewayApi',
			data: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, sharedLimitRedisUrl, sharedLimitRedisPassword },
		});

	it('checks the shared Redis too, naming the field to fix', async () => {
		expect(await test(redis.url)).toEqual({ status: 'OK', message: expect.stringMatching(/the shared Redis answered/) });
		expect(await test(redis.url, 'wrong-one')).toEqual({
			status: 'Error',
			message: expect.stringMatching(/^The gateway accepted the appCode, but the shared Redis cannot be used: "Shared Redis Password": Redis at/),
		});
		expect(await test(`redis://127.0.0.1:${await freePort()}`)).toEqual({ status: 'Error', message: expect.stringMatching(/"Shared Redis URL for Limits and Send Records": nothing answers at/) });
	});
});

describe('the SMS node with a shared limit that fails, then fixed', () => {
	const sms = new DataGatewaySms();
	const run = (sharedLimitRedisUrl: string) =>
		runWorkflow({
			steps: [
				{
					name: 'SMS',
					type: sms,
					parameters: sendParameters(emulator, { phone: '13900002999', variables: codeVariable('4321') }),
				},
			],
			items: [{}],
			credentials: {
				dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, sharedLimitRedisUrl, sharedLimitRedisPassword: 'right-password' },
			},
		});

	it('says "not sent" with the field to fix, and sends the same message once the URL is fixed', async () => {
		const failed = await run(`redis://127.0.0.1:${await freePort()}`);
		// The opt-out list and the send records are in the credential's Redis; the list is read first: the store's error names it and the field to fix.
		expect(failed.error?.message).toMatch(/^SMS not sent: the opt-out list could not be read: the credential's Redis at 127\.0\.0\.1:\d+ could not be used for the eviction check: nothing answers at .*"Shared Redis URL for Limits and Send Records"/);
		expect(failed.error?.message).not.toMatch(/may have been sent/);
		expect(sendCalls()).toBe(0);

		const fixed = await run(redis.url);
		expect(fixed.error).toBeUndefined();
		expect(fixed.json()[0]).toMatchObject({ taskId: expect.any(String), sent: true });
		expect(sendCalls()).toBe(1);
	});
});
