/** Node contexts and environment settings for the tests of openDurableStore's choice. */
import type { IExecuteFunctions, IWebhookFunctions, NodeExecutionHint } from 'n8n-workflow';

/** What openDurableStore reads of a node's context: its credential (if any) and where hints go. */
export function nodeContext(credentials?: Record<string, unknown>, hints: NodeExecutionHint[] = []): IExecuteFunctions {
	return {
		getNode: () => ({ id: 'node-1', name: 'Send SMS', type: 'test', typeVersion: 1, position: [0, 0], parameters: {}, ...(credentials ? { credentials: { dataGatewayApi: { id: 'credential-1', name: 'Gateway' } } } : {}) }),
		getCredentials: async () => credentials ?? Promise.reject(new Error('no credential on this node')),
		addExecutionHints: (...added: NodeExecutionHint[]) => hints.push(...added),
	} as unknown as IExecuteFunctions;
}

/** A trigger's webhook context: no credential, no hints. */
export function webhookContext(): IWebhookFunctions {
	return {
		getNode: () => ({ id: 'trigger-1', name: 'SMS Trigger', type: 'test', typeVersion: 1, position: [0, 0], parameters: {} }),
		getCredentials: async () => Promise.reject(new Error('no credential on this node')),
	} as unknown as IWebhookFunctions;
}

const QUEUE_SETTINGS = ['HOST', 'PORT', 'DB', 'USERNAME', 'PASSWORD', 'TLS', 'TLS_SERVERNAME', 'TLS_VALIDATE_CERTIFICATE', 'CLUSTER_NODES', 'DUALSTACK', 'KEEP_ALIVE', 'KEEP_ALIVE_DELAY'].map((name) => `QUEUE_BULL_REDIS_${name}`);
const SETTINGS = ['EXECUTIONS_MODE', ...QUEUE_SETTINGS, 'DATA_GATEWAY_REDIS_NOEVICTION'];
/** Every variable the store reads, with the `_FILE` variants of n8n's settings (n8n reads a setting from a file too). */
const STORE_VARIABLES = ['N8N_USER_FOLDER', 'DATA_GATEWAY_STORE_FILE', ...SETTINGS, ...SETTINGS.map((name) => `${name}_FILE`)];

/** Sets the store's environment variables for one test (unset the others); returns the restore. */
export function withEnvironment(values: Record<string, string>): () => void {
	const saved = Object.fromEntries(STORE_VARIABLES.map((name) => [name, process.env[name]]));
	for (const name of STORE_VARIABLES) delete process.env[name];
	Object.assign(process.env, values);
	return () => {
		for (const name of STORE_VARIABLES) {
			if (saved[name] === undefined) delete process.env[name];
			else process.env[name] = saved[name];
		}
	};
}
