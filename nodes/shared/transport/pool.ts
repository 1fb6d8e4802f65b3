// eslint-disable-next-line @n8n/community-nodes/no-restricted-imports -- undici, the package's HTTP client (scripts/n8n-accepted-findings.mjs)
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';

import { registerProcessState } from '../state/processState';

/** A whole answer: its status, headers and body as text. */
export interface GatewayExchange {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	text: string;
}

/** An exchange that failed; `statusCode` when the answer had begun (its body was cut off, too large, or not finished in time). */
export class ExchangeFailed extends Error {
	constructor(
		readonly reason: unknown,
		readonly statusCode?: number,
	) {
		super(reason instanceof Error ? reason.message : String(reason));
		this.name = 'ExchangeFailed';
	}
}

/** The reason an answer announcing more than MAX_ANSWER_BYTES is not read. */
export const ANSWER_TOO_LARGE = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';

/**
 * The largest answer read: far above any real one (a copyright page of 50 records is some tens of
 * KB), so that no server can make an item hold more memory than this. The pool ends a body that
 * passes it (undici's maxResponseSize) with UND_ERR_RES_EXCEEDED_MAX_SIZE.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

let sharedDispatcher: Dispatcher | undefined;

const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'];

/**
 * Keep-alive pool that follows HTTP_PROXY, HTTPS_PROXY and NO_PROXY, created on first use. Without
 * a proxy variable it is a plain pool: the proxy-aware one re-reads NO_PROXY on every request.
 */
export function dispatcher(): Dispatcher {
	if (!sharedDispatcher) {
		const pool = { keepAliveTimeout: 30_000, connections: 64, maxResponseSize: MAX_ANSWER_BYTES };
		// eslint-disable-next-line @n8n/community-nodes/no-restricted-globals -- the same variables EnvHttpProxyAgent reads
		sharedDispatcher = PROXY_VARIABLES.some((name) => process.env[name]) ? new EnvHttpProxyAgent(pool) : new Agent(pool);
	}
	return sharedDispatcher;
}

/** The code of an exchange ended before its request was written: it certainly did not reach the gateway. */
export const NEVER_SENT = 'DGW_REQUEST_NEVER_SENT';

/**
 * One GET through the pool, its answer read whole (what undici's request() and body.text() do,
 * without a stream and an AbortSignal per answer: this runs for every item). `attach` gets, at
 * once, how to end the exchange (the attempt's deadline): before the request is written (a
 * connection or a proxy's tunnel still opening, or the pool full) the exchange fails at once with
 * the code NEVER_SENT and the request is dropped when its turn comes; after, the request is aborted.
 * An answer above MAX_ANSWER_BYTES fails with the code ANSWER_TOO_LARGE, whether announced by its
 * length or met while reading.
 */
export function exchange(
	request: { origin: string; path: string; headers: Record<string, string> },
	attach: (abort: (reason: Error) => void) => void,
): Promise<GatewayExchange> {
	return new Promise<GatewayExchange>((resolve, reject) => {
		let statusCode: number | undefined;
		let headers: GatewayExchange['headers'] = {};
		const chunks: Buffer[] = [];
		let size = 0;
		let abort: ((reason: Error) => void) | undefined;
		let endedBeforeStart: Error | undefined;
		attach((reason) => {
			if (abort) return abort(reason);
			endedBeforeStart ??= reason;
			reject(new ExchangeFailed(Object.assign(new Error(reason.message), { code: NEVER_SENT })));
		});
		if (endedBeforeStart) return;
		dispatcher().dispatch(
			// No undici idle timers: the attempt's deadline bounds the whole exchange (transport/deadline.ts),
			// and undici's timers would add one more timer per request for the young generation to carry.
			{ origin: request.origin, path: request.path, headers: request.headers, method: 'GET', headersTimeout: 0, bodyTimeout: 0 },
			{
				onRequestStart: (controller) => {
					// Its attempt is over: the request goes no further than this.
					if (endedBeforeStart) return controller.abort(endedBeforeStart);
					abort = (reason) => controller.abort(reason);
				},
				onResponseStart: (controller, status, answerHeaders) => {
					if (status < 200) return; // informational: the answer follows
					statusCode = status;
					headers = answerHeaders;
					if (Number(answerHeaders['content-length']) > MAX_ANSWER_BYTES) controller.abort(Object.assign(new Error('the answer is too large'), { code: ANSWER_TOO_LARGE }));
				},
				onResponseData: (_controller, chunk) => {
					chunks.push(chunk);
					size += chunk.length;
				},
				onResponseEnd: () => {
					const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
					// As undici's body.text(): a byte order mark is not part of the text.
					const start = size > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
					resolve({ statusCode: statusCode ?? 0, headers, text: body.toString('utf8', start) });
				},
				onResponseError: (_controller, error) => reject(new ExchangeFailed(error, statusCode)),
			},
		);
	});
}

// Dropping the pool lets changed proxy variables take effect; requests still waiting for a connection are dropped with it.
registerProcessState('connectionPool', async () => {
	const previous = sharedDispatcher;
	sharedDispatcher = undefined;
	await previous?.destroy();
});
