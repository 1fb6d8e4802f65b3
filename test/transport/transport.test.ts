import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { ICredentialTestFunctions, INode } from 'n8n-workflow';
import { z } from 'zod/v4';

import { testGatewayCredential } from '../../nodes/shared/client';
import { asNodeError, GatewayFailure, toNodeApiError } from '../../nodes/shared/errors';
import { limiterFor } from '../../nodes/shared/limiter';
import { telephoneIdentitySchema } from '../../nodes/shared/schemas/telephone';
import { GatewayClient } from '../../nodes/shared/transport';
import { resetConnectionPool } from '../../nodes/shared/transportPool';
import type { AppCodePlacement, GatewaySettings } from '../../nodes/shared/transportSettings';
import { startEmulator, type Emulator } from '../emulator/server';

const node: INode = {
	id: 'n1',
	name: 'Gateway',
	type: 'CUSTOM.dataGatewayTelephone',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

let emulator: Emulator;

beforeAll(async () => {
	emulator = await startEmulator();
});
afterAll(async () => {
	await emulator.close();
	await resetConnectionPool();
});
beforeEach(async () => {
	await emulator.clearFaults();
	await emulator.resetLedger();
});

function client(overrides: Partial<GatewaySettings> = {}, { ownLimiter = false } = {}) {
	return new GatewayClient(
		{
		baseUrl: emulator.url,
		appCode: emulator.demo.memberAppCode,
		appCodePlacement: 'query',
		timeoutMs: 5000,
		maxRetries: 3,
			limiter: { maxConcurrent: 4, maxPerSecond: 0 },
			maxSpendYuan: 0,
			...overrides,
		},
		// A limiter of its own where many calls follow 429s of earlier tests, whose learned rate would slow them.
		{ ownLimiter },
	);
}

async function failureOf(promise: Promise<unknown>): Promise<GatewayFailure> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof GatewayFailure) return error;
		throw error;
	}
	throw new Error('expected the call to fail');
}

/** Rejects if the call has not settled long before what a stall would take; no assertion on elapsed time. */
async function beforeGuard<T>(promise: Promise<T>, guardMs: number): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const guard = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`still waiting after ${guardMs / 1000} s`)), guardMs);
	});
	try {
		return await Promise.race([promise, guard]);
	} finally {
		clearTimeout(timer);
	}
}

async function callsTo(path: string) {
	const ledger = await emulator.ledger();
	return ledger.byPath[path] ?? { calls: 0, billedCalls: 0, costYuan: 0 };
}

const plate = { carNumber: '京A12345', carType: '02' };
const passthrough = z.unknown();

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
		const failure = await failureOf(client({ timeoutMs: 300, maxRetries: 0 }).call('telephoneIdentify', { tel: '13800138002' }, passthrough));
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

describe('the appCode never leaks', () => {
	// Characters that URL-encoding changes, so both forms are checked.
	const canary = 'CANARY+9f3/k=Q7 secret';

	const faults = [
		[],
		[{ kind: '500', count: 10 }],
		[{ kind: '429', count: 10, retryAfterSeconds: 0 }],
		[{ kind: 'malformed', count: 1 }],
		[{ kind: 'html', count: 1 }],
		[{ kind: 'truncated', count: 1 }],
		[{ kind: 'reset', count: 10 }],
		[{ kind: 'hang', count: 1 }],
	] as const;

	it.each(['query', 'header'] as AppCodePlacement[])('appears in no error text, description or cause when sent as %s', async (placement) => {
		const leaks: string[] = [];
		for (const sequence of faults) {
			await emulator.setFaults({ sequence: [...sequence] });
			const failure = await failureOf(
				client({ appCode: canary, appCodePlacement: placement, maxRetries: 1, timeoutMs: 300 }).call('telephoneIdentify', { tel: '13800138009' }, passthrough),
			);
			const error = toNodeApiError(node, failure, 0);
			const texts = [failure.message, failure.hint, error.message, error.description, JSON.stringify(error.cause), JSON.stringify(error), String(error.stack)];
			for (const text of texts) {
				if (text && (text.includes(canary) || text.includes(encodeURIComponent(canary)) || text.includes('CANARY'))) {
					leaks.push(`${JSON.stringify(sequence)}: ${text}`);
				}
			}
		}
		expect(leaks).toEqual([]);
	});

	/** Every piece of 6 or more characters of the canary, in each encoding, that a text still holds. */
	function fragmentsIn(text: string): string[] {
		const found: string[] = [];
		for (const form of new Set([canary, encodeURIComponent(canary), new URLSearchParams({ s: canary }).toString().slice(2)])) {
			for (let start = 0; start + 6 <= form.length; start++) {
				if (text.includes(form.slice(start, start + 6))) found.push(form.slice(start, start + 6));
			}
		}
		return found;
	}

	it.each(['query', 'header'] as AppCodePlacement[])(
		'an echoed request (%s) is redacted before the body is shortened, wherever the cut falls',
		async (placement) => {
			const leaks: string[] = [];
			// The filler moves the code across the 200-character cut of the error text, one position at a time.
			for (let fillerChars = 120; fillerChars <= 200; fillerChars++) {
				await emulator.setFaults({ sequence: [{ kind: 'echo', fillerChars }] });
				const failure = await failureOf(
					client({ appCode: canary, appCodePlacement: placement, maxRetries: 0 }, { ownLimiter: true }).call('telephoneIdentify', { tel: '13800138009' }, passthrough),
				);
				const error = asNodeError(node, failure, 0);
				for (const text of [failure.message, failure.hint, error.message, error.description, JSON.stringify(error)]) {
					if (text && fragmentsIn(text).length > 0) leaks.push(`${fillerChars}: ${fragmentsIn(text).join(' ')} in ${text}`);
				}
			}
			expect(leaks).toEqual([]);
		},
		30_000,
	);

	it.each(['query', 'header'] as AppCodePlacement[])('an echo the gateway itself cut leaves no piece of the code (%s)', async (placement) => {
		const leaks: string[] = [];
		const echoStart = 10;
		for (let cutAt = echoStart + 20; cutAt <= echoStart + 100; cutAt++) {
			await emulator.setFaults({ sequence: [{ kind: 'echo', fillerChars: echoStart, cutAt }] });
			const failure = await failureOf(
				client({ appCode: canary, appCodePlacement: placement, maxRetries: 0 }, { ownLimiter: true }).call('telephoneIdentify', { tel: '13800138009' }, passthrough),
			);
			if (fragmentsIn(failure.message).length > 0) leaks.push(`${cutAt}: ${failure.message}`);
		}
		expect(leaks).toEqual([]);
	}, 30_000);
});

describe('proxies from the environment', () => {
	let proxy: Server;
	let proxied: string[];
	const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };

	beforeAll(async () => {
		proxied = [];
		// A minimal forward proxy: records the request line it relays, in absolute form or inside a CONNECT tunnel.
		proxy = createServer((incoming, outgoing) => {
			proxied.push(incoming.url ?? '');
			const target = new URL(incoming.url ?? '');
			const relay = httpRequest(
				{ host: target.hostname, port: target.port, path: target.pathname + target.search, method: incoming.method, headers: incoming.headers },
				(answer) => {
					outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(outgoing);
				},
			);
			incoming.pipe(relay);
		});
		proxy.on('connect', (incoming, clientSocket, head) => {
			const [host, port] = (incoming.url ?? '').split(':');
			const upstream = connect(Number(port), host, () => {
				clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
				if (head.length) upstream.write(head);
				clientSocket.once('data', (chunk: Buffer) => proxied.push(`http://${incoming.url}${chunk.toString('utf8').split(' ')[1]}`));
				clientSocket.pipe(upstream).pipe(clientSocket);
			});
			clientSocket.on('error', () => upstream.destroy());
			upstream.on('error', () => clientSocket.destroy());
		});
		await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
	});
	afterAll(async () => {
		process.env.HTTP_PROXY = saved.HTTP_PROXY;
		process.env.NO_PROXY = saved.NO_PROXY;
		if (saved.HTTP_PROXY === undefined) delete process.env.HTTP_PROXY;
		if (saved.NO_PROXY === undefined) delete process.env.NO_PROXY;
		await resetConnectionPool();
		proxy.closeAllConnections();
		await new Promise((resolve) => proxy.close(resolve));
	});

	it('goes through HTTP_PROXY, and the header placement keeps the appCode out of the proxied URL', async () => {
		process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
		delete process.env.NO_PROXY;
		await resetConnectionPool();
		await client({ appCodePlacement: 'header' }).call('telephoneIdentify', { tel: '13800138004' }, passthrough);
		expect(proxied).toHaveLength(1);
		expect(proxied[0]).toContain('/telecom/identify?tel=13800138004');
		expect(proxied[0]).not.toContain('appCode');
	});

	it('bypasses the proxy for hosts in NO_PROXY', async () => {
		process.env.NO_PROXY = '127.0.0.1';
		await resetConnectionPool();
		const before = proxied.length;
		await client().call('telephoneIdentify', { tel: '13800138005' }, passthrough);
		expect(proxied.length).toBe(before);
	});
});
