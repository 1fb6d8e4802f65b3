/**
 * Findings of n8n's own tooling that this package accepts, each with its reason: `@n8n/node-cli`'s
 * default lint config (`npm run lint:n8n`) and n8n's community-package scanner (`npm run scan`).
 * Any other finding fails `npm run check`. Files are source paths; the scanner's findings in the
 * packed `dist/…/x.js` count as their `…/x.ts`.
 */
export const ACCEPTED_FINDINGS = [
	{
		rule: '@n8n/community-nodes/no-runtime-dependencies',
		files: ['package.json'],
		reason: 'runtime dependencies by design: undici (HTTP client), zod (answer schemas) and ioredis (the shared Redis)',
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		files: ['nodes/shared/transport/pool.ts'],
		reason: 'the one import of undici, the HTTP client of the package',
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		files: ['nodes/shared/store/redis/connection.ts'],
		reason:
			"the one import of ioredis, n8n's own Redis client (issue 19), used only when the credential's Shared Redis URL for Limits and Send Records is set",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-globals',
		files: ['nodes/shared/transport/pool.ts'],
		reason: "reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY of the n8n process, as undici's EnvHttpProxyAgent does, to choose a plain pool when none is set",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-globals',
		files: ['nodes/shared/state/sweep.ts'],
		reason:
			"one unref'd setInterval per use that bounds state in time without waiting for a later call: the paid-answer memory (issue 18), the durable store kept in process memory, and the deadline of the gateway calls in flight (issue 25); each runs only while something is held and never keeps n8n alive",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		files: ['nodes/shared/store/hostEnvironment.ts'],
		reason: "the SQLite store's file lives in n8n's user folder (node:os for the home folder, node:path, node:fs to create the folder), as n8n's own database does (issue 24); node:fs also reads a setting's <NAME>_FILE (a Docker secret), as n8n's config package does (issue 33)",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-globals',
		files: ['nodes/shared/store/hostEnvironment.ts'],
		reason: "reads n8n's own settings (N8N_USER_FOLDER, EXECUTIONS_MODE, QUEUE_BULL_REDIS_*, each also from its _FILE as n8n reads them) to find the user folder and the queue Redis, and DATA_GATEWAY_REDIS_NOEVICTION (issue 33), and asks the process for node:sqlite (process.getBuiltinModule) so that a Node without it still loads the package (issue 24)",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		files: ['nodes/shared/store/sqliteCheckpoints.ts'],
		reason:
			"node:worker_threads: one thread per SQLite store file copies its WAL into the file (a checkpoint waits for the disk, which on n8n's main thread held the event loop); where threads are not allowed, the main connection checkpoints as before",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		files: ['nodes/shared/store/nameSecret.ts'],
		reason:
			"node:fs and node:path: reads n8n's encryption key as n8n does (N8N_ENCRYPTION_KEY_FILE, `<user folder>/.n8n/config`) to key the store's names, so no phone number can be traced from them (issue 33)",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-globals',
		files: ['nodes/shared/store/nameSecret.ts'],
		reason: "reads DATA_GATEWAY_STORE_KEY(_FILE), else n8n's own settings N8N_ENCRYPTION_KEY(_FILE), N8N_USER_FOLDER and HOME, as n8n's config does, for the key the store's names are keyed with (issue 33)",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		files: ['nodes/shared/store/sqliteFiles.ts'],
		reason: 'node:fs and node:path: the SQLite store file and its folder made owner-only (600/700), and earlier files narrowed to 600 (issue 33)',
	},
];
