/**
 * What a Redis does with the store's keys, asked once per connection (store/redisStore.ts): whether
 * it may evict them (maxmemory-policy) and whether it keeps them over a restart (AOF, RDB
 * snapshots). Every key of the store carries an expiry, so every policy but `noeviction` may drop
 * them under memory pressure: `volatile-*` takes keys with an expiry first, `allkeys-*` any key.
 */
import { RedisUnavailable } from './settings';

/** What Redis said, or undefined where it would not say (managed Redis often refuses CONFIG). */
export interface RedisEnvironment {
	/** maxmemory-policy, from CONFIG GET, else from INFO memory. */
	policy?: string;
	/** The commands Redis refused while asked, for the words of a hint or an error. */
	refused: string[];
	/** AOF on (appendonly), RDB snapshots on (a `save` schedule); undefined: not known. */
	aof?: boolean;
	rdb?: boolean;
}

/** Sends one command: store/redisStore.ts's connection. */
type Send = (name: string, args: string[]) => Promise<unknown>;

/** Redis's answer to CONFIG GET of one setting; undefined when refused or not given. */
async function configValue(send: Send, name: string, refused: string[]): Promise<string | undefined> {
	const reply = await refusedAsUndefined(send('CONFIG', ['GET', name]), `CONFIG GET ${name}`, refused);
	if (Array.isArray(reply) && reply.length === 2 && reply[0] === name && typeof reply[1] === 'string') return reply[1];
	return undefined;
}

/** The fields of an INFO section (`name:value` lines); empty when refused. */
async function infoFields(send: Send, section: string, refused: string[]): Promise<Map<string, string>> {
	const reply = await refusedAsUndefined(send('INFO', [section]), `INFO ${section}`, refused);
	const fields = new Map<string, string>();
	if (typeof reply !== 'string') return fields;
	for (const line of reply.split(/\r?\n/)) {
		const colon = line.indexOf(':');
		if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
	}
	return fields;
}

/** A refused command (unknown, renamed away, not allowed to this user) answers undefined; a lost connection still fails. */
async function refusedAsUndefined(answer: Promise<unknown>, what: string, refused: string[]): Promise<unknown> {
	return await answer.catch(async (error: unknown) => {
		if (!(error instanceof RedisUnavailable) || error.refusal === undefined) return await Promise.reject(error);
		refused.push(`${what}: ${error.refusal.split('\n')[0].slice(0, 80)}`);
		return undefined;
	});
}

/** Asks Redis (one or two round trips); fails only when the connection does. */
export async function probeRedis(send: Send): Promise<RedisEnvironment> {
	const refused: string[] = [];
	const [policy, save, persistence] = await Promise.all([configValue(send, 'maxmemory-policy', refused), configValue(send, 'save', refused), infoFields(send, 'persistence', refused)]);
	const memoryPolicy = policy ?? (await infoFields(send, 'memory', refused)).get('maxmemory_policy');
	const aofEnabled = persistence.get('aof_enabled');
	return {
		...(memoryPolicy ? { policy: memoryPolicy } : {}),
		refused,
		...(aofEnabled === '0' || aofEnabled === '1' ? { aof: aofEnabled === '1' } : {}),
		...(save !== undefined ? { rdb: save.trim() !== '' } : {}),
	};
}

/** Whether the policy may drop the store's keys: 'unknown' when Redis would not say. */
export function evictionOf(environment: RedisEnvironment): 'never' | 'may' | 'unknown' {
	if (environment.policy === undefined) return 'unknown';
	// Any other policy, today's and any later one, drops keys when memory is full.
	return environment.policy === 'noeviction' ? 'never' : 'may';
}

/** 'none': a restart of this Redis loses every key; 'unknown' when Redis would not say. */
export function persistenceOf(environment: RedisEnvironment): 'aof' | 'rdb' | 'none' | 'unknown' {
	if (environment.aof) return 'aof';
	if (environment.rdb) return 'rdb';
	return environment.aof === false && environment.rdb === false ? 'none' : 'unknown';
}
