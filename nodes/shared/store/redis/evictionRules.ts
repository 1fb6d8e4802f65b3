/**
 * What the store does with what a Redis said about its keys (store/redis/environment.ts): which
 * keys it refuses to keep on a Redis that may evict them, and the words of the refusal and hints.
 */
import { evictionOf, persistenceOf, type RedisEnvironment } from './environment';
import { REDIS_URL_FIELD } from './settings';

/**
 * Keys whose early loss costs a call, a count or a report's reference, never a message sent twice:
 * answers kept for reuse (lookups/reuse.ts), what Only New has seen (lookups/onlyNew.ts), the
 * telephone quota's counts (lookups/telephoneQuota.ts), delivery records (store/sendsByTask.ts),
 * the catalogue of signatures and templates and its list of accounts (store/reviewedCatalogue.ts:
 * a convenience for the pickers; a vanished one costs names in a list, filled again by Import).
 * Every other key (the SMS send records and per-number counts among them, and the money counted
 * against the cap and budgets: `spend|`, money/ledger.ts; the usage counts, which follow the budgets'
 * rules: `usage|`, usage/counts.ts; the opt-out list's size) is refused on a Redis that may evict it:
 * a key of a kind not listed here is kept only where it cannot vanish.
 */
const MAY_VANISH = /^(?:lookup-answer|seen|seen-generation|telephone-calls|catalogue|catalogue-accounts)\||^delivery:/;

/** Whether every key of an update may vanish early without a message being sent twice. */
export function mayAllVanish(keys: readonly string[]): boolean {
	return keys.every((key) => MAY_VANISH.test(key));
}

/** Where the fix points when the Redis named cannot be changed. */
const OWN_REDIS = `or give the package a Redis of its own in the credential's "${REDIS_URL_FIELD}" (a Redis you run keeps the default, noeviction)`;

/**
 * Why this Redis may not hold SMS send records and per-number counts, or undefined when it may.
 * `confirmed`: whether the operator says it does not evict (DATA_GATEWAY_REDIS_NOEVICTION=true),
 * asked only where Redis itself would not say.
 */
export function evictionRefusal(label: string, environment: RedisEnvironment, confirmed: () => boolean, variable: string): string | undefined {
	const eviction = evictionOf(environment);
	if (eviction === 'never' || (eviction === 'unknown' && confirmed())) return undefined;
	const risk = 'the SMS send records and per-number counts could vanish there before their time, and a message already sent could then be sent again';
	if (eviction === 'may') {
		return `${label} may evict keys (maxmemory-policy ${environment.policy}): ${risk}. Set maxmemory-policy to noeviction on that Redis, ${OWN_REDIS}`;
	}
	return (
		`${label} would not say whether it evicts keys (${environment.refused.join('; ')}): ${risk} if it does. ` +
		`Set maxmemory-policy to noeviction on that Redis and then ${variable}=true in n8n's environment, ${OWN_REDIS}`
	);
}

/**
 * Sentences for a hint about what this Redis may lose: keys it may evict (for what it may keep:
 * answers, seen values, quota counts), and everything on a restart when it keeps nothing on disk.
 */
export function environmentNotices(label: string, environment: RedisEnvironment, confirmed: () => boolean): string[] {
	const notices: string[] = [];
	const eviction = evictionOf(environment);
	const kept = 'answers kept for reuse, what Only New has seen and the telephone quota counts may vanish before their time (a vanished answer is asked, and paid, again)';
	if (eviction === 'may') notices.push(`${label} may evict keys (maxmemory-policy ${environment.policy}): ${kept}.`);
	if (eviction === 'unknown' && !confirmed()) notices.push(`${label} would not say whether it evicts keys: ${kept} if it does.`);
	if (persistenceOf(environment) === 'none') {
		notices.push(
			`${label} keeps nothing on disk (no AOF, no RDB snapshots): a restart of that Redis forgets every record kept there. ` +
				'A message sent within its repeat window could then be sent again, per-number counts start again at 0, and kept answers are asked again.',
		);
	}
	return notices;
}
