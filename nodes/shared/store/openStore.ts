import type { IExecuteFunctions, ILoadOptionsFunctions, IWebhookFunctions } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../gateway/account';
import { registerProcessState } from '../state/processState';
import { sameStore, type DurableStore } from './durableStore';
import { nodeSqlite, nodeVersion, queueRedisSettings, storeFilePath } from './hostEnvironment';
import { MemoryStore } from './memoryStore';
import { REDIS_CA_FIELD, redisFor, REDIS_URL_FIELD, redisSettingsFromCredentials, releaseRedis, type RedisUnavailable, type SharedRedis } from './redis/connection';
import { RedisDurableStore } from './redisStore';
import { storeFileExists } from './sqliteFiles';
import { SqliteDurableStore } from './sqliteStore';

/** One store per process and target: Redis stores by connection, SQLite stores by file. */
const redisStores = new WeakMap<SharedRedis, RedisDurableStore>();
const sqliteStores = new Map<string, SqliteDurableStore>();
let processMemory: MemoryStore | undefined;

export interface OpenOptions {
	/**
	 * Skip the credential's Redis: the store that a node without the credential (the SMS Trigger)
	 * also opens, for records that node must read.
	 */
	withoutCredential?: boolean;
}

/**
 * The durable store for this node. Order: the credential's Redis, n8n's queue Redis in queue
 * mode, an SQLite file in n8n's user folder, this process's memory. Opening sends nothing: a store
 * that cannot be used fails its first call with a StoreUnavailable. Works for a node's execute()
 * and a trigger's webhook() (which may have no credential), and for the form's lists (load options).
 */
export async function openDurableStore(ctx: IExecuteFunctions | IWebhookFunctions | ILoadOptionsFunctions, options: OpenOptions = {}): Promise<DurableStore> {
	const node = ctx.getNode();
	const credential = options.withoutCredential ? undefined : node.credentials?.[CREDENTIAL_TYPE];
	if (credential) {
		// Tied to the credential, so that a changed URL closes the old connection (store/redis/connection.ts).
		const owner = `store:${credential.id ?? credential.name}`;
		const settings = redisSettingsFromCredentials(await ctx.getCredentials(CREDENTIAL_TYPE));
		if (settings) {
			const redis = redisFor(settings, owner);
			const store = redisStore(redis, `the credential's Redis${at(redis)}`, (failure) => `fix the credential's "${failure.field}"`);
			credentialRedisStores.add(store);
			return store;
		}
		releaseRedis(owner);
	}
	const queue = queueRedisStore();
	if (queue) return queue;
	const sqlite = sqliteStore();
	if (sqlite) return sqlite;
	processMemory ??= new MemoryStore();
	return processMemory;
}

function sqliteStore(): SqliteDurableStore | undefined {
	const sqlite = nodeSqlite();
	if (!sqlite) return undefined;
	const file = storeFilePath();
	let store = sqliteStores.get(file);
	if (!store) sqliteStores.set(file, (store = new SqliteDurableStore(sqlite, file)));
	return store;
}

/**
 * Stores that may still hold what the guardrails kept before this one was used (store/guardScope.ts):
 * under a Redis, this host's SQLite file when it exists (a Redis added to the credential, n8n moved
 * to queue mode); under the credential's Redis in queue mode, n8n's queue Redis too (when it is
 * another). Opening the file makes none.
 */
export function earlierStoresOf(store: DurableStore): DurableStore[] {
	if (store.kind !== 'redis') return [];
	const queue = credentialRedisStores.has(store) ? queueRedisStore() : undefined;
	const sqlite = storeFileExists(storeFilePath()) ? sqliteStore() : undefined;
	return [queue, sqlite].filter((earlier): earlier is RedisDurableStore | SqliteDurableStore => earlier !== undefined && !sameStore(earlier, store));
}

/** The credential's Redis stores: n8n's queue Redis, when there is one, came before them (earlierStoresOf). */
const credentialRedisStores = new WeakSet<DurableStore>();

function queueRedisStore(): RedisDurableStore | undefined {
	const queue = queueRedisSettings();
	if (!queue) return undefined;
	const redis = redisFor(queue, 'store:queue');
	return redisStore(redis, `n8n's queue Redis${at(redis)}`, queueFix);
}

const at = (redis: SharedRedis) => (redis.where ? ` at ${redis.where}` : '');

/** Where to fix n8n's queue Redis: its settings, and for its certificate the CA n8n trusts. */
function queueFix(failure: RedisUnavailable): string {
	if (failure.field === REDIS_CA_FIELD) return "check n8n's QUEUE_BULL_REDIS_TLS_* settings, or give n8n the CA in NODE_EXTRA_CA_CERTS";
	return "check n8n's QUEUE_BULL_REDIS_* settings";
}

function redisStore(redis: SharedRedis, label: string, fix: ConstructorParameters<typeof RedisDurableStore>[2]): RedisDurableStore {
	let store = redisStores.get(redis);
	if (!store) redisStores.set(redis, (store = new RedisDurableStore(redis, label, fix)));
	return store;
}

/**
 * A sentence for the node's hint about what the store may lose, else undefined: users should know
 * what a restart forgets. Process memory (no Redis, and a Node without `node:sqlite`); a Redis that
 * may evict keys or keeps nothing on disk, once it has been asked (store/redis/environment.ts).
 */
export function storeFallbackNotice(store: DurableStore): string | undefined {
	if (store instanceof RedisDurableStore) return store.notices().join(' ') || undefined;
	if (store.kind !== 'memory') return undefined;
	return (
		`What this node keeps between executions (send records, answers kept for reuse) is in ${store.label} only: a restart of n8n forgets it, and other n8n processes do not see it; so the opt-out list and the daily and monthly budgets are refused here. ` +
		`This Node (${nodeVersion()}) has no node:sqlite for a store file; run n8n on Node 22.13 or later (as n8n 2.x does), or set "${REDIS_URL_FIELD}" in the credential.`
	);
}

/**
 * Adds storeFallbackNotice to the execution's hints, where n8n offers hints (not in a trigger's
 * webhook). A Redis is asked about itself first; the store's first update waits for that same
 * answer, so the hint is in place before the node goes on.
 */
export function hintStoreFallback(ctx: IExecuteFunctions | IWebhookFunctions, store: DurableStore): void {
	const hints = ctx as Partial<Pick<IExecuteFunctions, 'addExecutionHints'>>;
	const hint = () => {
		const notice = storeFallbackNotice(store);
		if (notice && typeof hints.addExecutionHints === 'function') hints.addExecutionHints({ message: notice, type: 'warning', location: 'outputPane' });
	};
	if (!(store instanceof RedisDurableStore)) return hint();
	// A Redis that cannot be asked fails the store's own calls, which say why.
	void store.environment().then(hint, () => undefined);
}

// Closing the SQLite files and forgetting every store is what a restart does.
registerProcessState('openStores', () => {
	for (const store of sqliteStores.values()) store.close();
	sqliteStores.clear();
	processMemory = undefined;
});
