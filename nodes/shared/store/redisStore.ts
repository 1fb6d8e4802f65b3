import { randomUUID } from 'node:crypto';

import { sleep } from 'n8n-workflow';

import { StoreUnavailable, type DurableStore, type StoreDecision, type StoreGuess } from './durableStore';
import { mayWorkNow, nextTurn } from './eventLoopShare';
import { hostClock } from './hostClock';
import { NOEVICTION_VARIABLE, noEvictionConfirmed } from './hostEnvironment';
import { checkWrittenKeys, KEY_CHECK_NAME, keyCheck, keyMismatch, legacyKeyName, lifetimeMs, phoneTag, storedKeyName } from './keyName';
import { RedisUnavailable, type SharedRedis } from './redis/connection';
import { probeRedis, type RedisEnvironment } from './redis/environment';
import { environmentNotices, evictionRefusal, mayAllVanish } from './redis/evictionRules';
import { compareAndSet, ERASE_PHONE, GIVE_BACK_TURN, PHONE_SET_PREFIX, TURN_AFTER, TURN_NAME } from './redis/scripts';

/** What the store needs of a connection (store/redis/connection.ts's SharedRedis); without a connectionCount, Redis is asked about itself once. */
export type RedisCommands = Pick<SharedRedis, 'command' | 'runScript'> & Partial<Pick<SharedRedis, 'connectionCount'>>;

/** How long what Redis said about eviction and persistence is trusted before it is asked again. */
export const REPROBE_MS = 60_000;

/**
 * Tries of one update before it gives up on keys that keep changing (only writers that ignore the
 * turn, of versions before it, can make it), and waits for another update's turn, 1 to 5 ms each
 * (a turn is held for a round trip, at most TURN_MS); tests may lower them.
 */
export const redisStoreTries = { max: 12, waits: 3_000 };

/**
 * A Redis shared by every n8n process (the credential's, or n8n's queue Redis): `update` reads
 * the keys and Redis's clock (or takes the caller's guess of them, saving that round trip),
 * decides, then writes in one compare-and-set script, and decides again on what Redis holds when
 * another process changed a key meanwhile; an update that keeps losing takes the store's turn
 * (redis/scripts.ts), so it cannot starve. Every reply is checked; anything else is a
 * StoreUnavailable that names this Redis and what to fix.
 */
export class RedisDurableStore implements DurableStore {
	readonly kind = 'redis' as const;

	constructor(
		private readonly redis: RedisCommands,
		readonly label: string,
		/** Where to fix a failure: the credential's field, or n8n's QUEUE_BULL_REDIS_* settings. */
		private readonly fix: (failure: RedisUnavailable) => string,
	) {}

	async now(): Promise<number> {
		return this.timeFrom(await this.call('TIME', () => this.redis.command('TIME', [])));
	}

	async read(keys: readonly string[]): Promise<Array<string | undefined>> {
		if (keys.length === 0) return [];
		while (!mayWorkNow()) await nextTurn();
		// Asked here too, so that a run that only reads learns what it may lose (storeFallbackNotice).
		await this.checkedEnvironment();
		return await this.valuesOf(keys.map(storedKeyName), keys.map(legacyKeyName));
	}

	/** Deletes every key written about this phone number (StoreWrite.phone); returns how many. */
	async erasePhone(phone: string): Promise<number> {
		const answer = await this.call('the erase script', () => this.redis.runScript(ERASE_PHONE, [`${PHONE_SET_PREFIX}${phoneTag(phone)}`, KEY_CHECK_NAME], [keyCheck()]), true);
		if (answer === -1) throw new StoreUnavailable(this.label, keyMismatch(this.label));
		if (typeof answer !== 'number') throw this.unexpected('the erase script', answer, true);
		return answer;
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>, guess?: StoreGuess): Promise<T> {
		await this.refuseWhereKeysMayVanish(keys);
		// Updates of this process to the same keys take turns: they would only collide with each other.
		return await this.turns.run(keys, async () => await this.compareAndSet(keys, decide, guess));
	}

	private probed?: { connection?: number; at: number; environment: RedisEnvironment };
	private probing?: Promise<RedisEnvironment>;

	/**
	 * What this Redis says about its keys (eviction policy, persistence), asked again on each new
	 * connection (a reconnect may reach another server: a failover) and at least once a minute while
	 * connected (an operator may switch a running Redis to allkeys-lru): one or two commands a minute.
	 */
	async environment(): Promise<RedisEnvironment> {
		const known = this.knownEnvironment();
		if (known) return known;
		this.probing ??= probeRedis(async (name, args) => await this.redis.command(name, args))
			.then((environment) => {
				this.probed = { connection: this.redis.connectionCount, at: hostClock.now(), environment };
				return environment;
			})
			.finally(() => {
				this.probing = undefined;
			});
		return await this.probing;
	}

	/** What this connection said within the last minute; undefined before it was asked, after a reconnect, or once a minute has passed. */
	private knownEnvironment(): RedisEnvironment | undefined {
		const probed = this.probed;
		if (probed === undefined || probed.connection !== this.redis.connectionCount) return undefined;
		// Either way: a host clock set back must not make an old answer look fresh for long.
		return Math.abs(hostClock.now() - probed.at) < REPROBE_MS ? probed.environment : undefined;
	}

	/** The environment, asked if need be; a failure is a StoreUnavailable like any other call's. */
	private async checkedEnvironment(): Promise<RedisEnvironment> {
		return this.knownEnvironment() ?? ((await this.call('the eviction check', async () => await this.environment())) as RedisEnvironment);
	}

	/** Sentences for a hint about what this Redis may lose, once it has been asked (else none). */
	notices(): string[] {
		return this.probed ? environmentNotices(this.label, this.probed.environment, noEvictionConfirmed) : [];
	}

	/** Keys that must not vanish early (SMS send records, per-number counts) are refused on a Redis that may evict them. */
	private async refuseWhereKeysMayVanish(keys: readonly string[]): Promise<void> {
		const environment = await this.checkedEnvironment();
		if (mayAllVanish(keys)) return;
		const refusal = evictionRefusal(this.label, environment, noEvictionConfirmed, NOEVICTION_VARIABLE);
		if (refusal) throw new StoreUnavailable(this.label, refusal);
	}

	private readonly turns = new KeyTurns();

	private async compareAndSet<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>, guess?: StoreGuess): Promise<T> {
		while (!mayWorkNow()) await nextTurn();
		const names = keys.map(storedKeyName);
		const legacy = keys.map(legacyKeyName);
		const indexOf = new Map<string, number>();
		keys.forEach((key, index) => indexOf.has(key) || indexOf.set(key, index + 1));
		// Only told apart from other updates' tokens; randomUUID draws from a pool, randomBytes asks the system each time.
		const token = randomUUID();
		// A guess of every key is tried first: the script below writes only if it was right.
		let guessed = guess?.values.length === keys.length ? guess : undefined;
		let conflicts = 0;
		let waits = 0;
		let wrote = false;
		try {
			for (;;) {
				// Both go out at once on the one connection; the script below checks the values anyway.
				const [time, values] = guessed ? [guessed.now, [...guessed.values]] : await Promise.all([this.now(), names.length ? this.valuesOf(names, legacy) : []]);
				const { writes, result } = decide(values, time);
				checkWrittenKeys(keys, writes);
				if (writes.length === 0 && !guessed) return result;
				const args: string[] = [keyCheck(), token, conflicts >= TURN_AFTER ? '1' : '0', ...values.map((value) => (value === undefined ? '0' : `1${value}`))];
				for (const write of writes) {
					const ttl = write.value === null ? undefined : lifetimeMs(write.ttlMs);
					const tag = write.value !== null && write.phone !== undefined ? phoneTag(write.phone) : '';
					args.push(String(indexOf.get(write.key)), write.value === null ? 'D' : ttl === undefined ? 'K' : String(ttl), write.value ?? '', tag);
				}
				const answer = await this.call('the compare-and-set script', () => this.redis.runScript(compareAndSet(names.length * 2 + 2), [...names, ...legacy, KEY_CHECK_NAME, TURN_NAME], args), true);
				// On a write the script gave back the turn, if this update held it.
				wrote = answer === 1;
				if (wrote) return result;
				if (answer === -1) throw new StoreUnavailable(this.label, keyMismatch(this.label));
				if (answer !== 0 && answer !== 2) throw this.unexpected('the compare-and-set script', answer, true);
				if (answer === 0 && guessed) {
					// The guess was stale: read what the keys hold now.
					guessed = undefined;
					continue;
				}
				guessed = undefined;
				if (answer === 2 && ++waits > redisStoreTries.waits) {
					throw new StoreUnavailable(this.label, `${this.label}: other processes kept their turn at its keys for ${waits - 1} waits; nothing was written, try again`);
				}
				if (answer === 0 && ++conflicts >= redisStoreTries.max) {
					throw new StoreUnavailable(this.label, `${this.label}: the keys of this update kept changing under other processes (${conflicts} tries); nothing was written, try again`);
				}
				// Jittered, so that two processes that keep colliding drift apart.
				await sleep(1 + Math.floor(Math.random() * 4));
			}
		} finally {
			if (!wrote && conflicts >= TURN_AFTER) await this.giveBackTurn(token);
		}
	}

	/** Gives back the turn if this update still holds it (it wrote nothing); a failure leaves it to expire. */
	private async giveBackTurn(token: string): Promise<void> {
		await this.redis.runScript(GIVE_BACK_TURN, [TURN_NAME], [token]).catch(() => undefined);
	}

	/** Runs one call; any failure is a StoreUnavailable naming this store and what to fix. */
	private async call(what: string, send: () => Promise<unknown>, writes = false): Promise<unknown> {
		try {
			return await send();
		} catch (error) {
			throw this.failed(what, error, writes);
		}
	}

	private failed(what: string, error: unknown, writes: boolean): StoreUnavailable {
		if (error instanceof RedisUnavailable) {
			// Only a connection lost after sending, or an answer that came too late, can hide a write; a
			// refusal (OOM, a read-only replica) or a connection that never opened cannot.
			const hidden = /was lost|no answer from Redis/.test(error.reason);
			return new StoreUnavailable(this.label, `${this.label} could not be used for ${what}: ${error.reason} (${this.fix(error)})`, {
				cause: error,
				maybeWritten: writes && hidden,
			});
		}
		const reason = error instanceof Error ? error.message : String(error);
		return new StoreUnavailable(this.label, `${this.label} could not be used for ${what}: ${reason.slice(0, 200)}`, { cause: error, maybeWritten: writes });
	}

	private timeFrom(reply: unknown): number {
		if (Array.isArray(reply) && reply.length === 2 && reply.every((part) => typeof part === 'string' && /^\d{1,16}$/.test(part))) {
			const [seconds, micros] = reply as [string, string];
			return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
		}
		throw this.unexpected('TIME', reply);
	}

	/** Each key's value under its name, else under its name of earlier versions; refused when the store's key check is another process's. */
	private async valuesOf(names: string[], legacy: string[]): Promise<Array<string | undefined>> {
		const reply = await this.call('MGET', () => this.redis.command('MGET', [...names, ...legacy, KEY_CHECK_NAME]));
		if (Array.isArray(reply) && reply.length === names.length * 2 + 1 && reply.every((value) => value === null || typeof value === 'string')) {
			const values = reply as Array<string | null>;
			const check = values[values.length - 1];
			if (check !== null && check !== keyCheck()) throw new StoreUnavailable(this.label, keyMismatch(this.label));
			return names.map((_, index) => values[index] ?? values[names.length + index] ?? undefined);
		}
		throw this.unexpected('MGET', reply);
	}

	private unexpected(what: string, reply: unknown, writes = false): StoreUnavailable {
		return new StoreUnavailable(this.label, `${this.label} answered ${describeReply(reply)} to ${what}, which this store does not expect${writes ? '; its writes may or may not have been applied' : ''}`, {
			maybeWritten: writes,
		});
	}
}

/**
 * Runs work in call order per key: a call waits for the earlier calls that share any of its keys,
 * and only for those (no deadlock: each waits only for calls that started before it).
 */
class KeyTurns {
	private readonly last = new Map<string, Promise<unknown>>();

	async run<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
		const unique = [...new Set(keys)];
		const earlier = unique.map((key) => this.last.get(key)).filter((turn) => turn !== undefined);
		const mine = Promise.allSettled(earlier).then(work);
		const done = mine.then(
			() => undefined,
			() => undefined,
		);
		for (const key of unique) this.last.set(key, done);
		void done.then(() => {
			for (const key of unique) if (this.last.get(key) === done) this.last.delete(key);
		});
		return await mine;
	}
}

/** A short, safe description of a reply: its kind and the start of it. */
function describeReply(reply: unknown): string {
	if (reply === null || reply === undefined) return 'nothing';
	if (Array.isArray(reply)) return `a list of ${reply.length}`;
	const text = typeof reply === 'string' ? JSON.stringify(reply.slice(0, 40)) : String(reply).slice(0, 40);
	return `${typeof reply} ${text}`;
}
