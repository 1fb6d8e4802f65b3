// eslint-disable-next-line @n8n/community-nodes/no-restricted-imports -- undici, the package's HTTP client (scripts/n8n-accepted-findings.mjs)
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';

import { registerProcessState } from '../state/processState';

/** An answer as the pool gives it: status, headers and the body still streaming. */
export type GatewayResponse = Dispatcher.ResponseData;

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

// Dropping the pool lets changed proxy variables take effect.
registerProcessState('connectionPool', async () => {
	const previous = sharedDispatcher;
	sharedDispatcher = undefined;
	await previous?.close();
});
