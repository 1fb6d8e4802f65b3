/**
 * The one interface for state that outlives an execution: send records, answers kept for hours,
 * values seen by earlier runs, counters per day, a send's reference for its delivery report.
 *
 * Every decision that two processes may take at once goes through `update`, which reads the keys,
 * lets `decide` compute the writes from what it read and the store's clock, and applies them only
 * if none of the keys changed meanwhile (else it reads again and decides again). `decide` must
 * therefore be pure: it may run more than once for one update.
 *
 * Implementations, picked by openDurableStore (store/openStore.ts): Redis (the credential's, or
 * n8n's queue Redis in queue mode), an SQLite file in n8n's user folder, or process memory.
 */

/**
 * What a write does to one key: a new value kept for `ttlMs` (undefined or 0: until deleted; a
 * negative one is refused), or `null` to delete it. `phone`: the phone number the value is about
 * (11 digits, as the nodes check it), so that erasing that number (erasePhone.ts) finds the value;
 * the store keeps only a keyed tag of it (keyName.ts's phoneTag), never the number. A write without
 * it keeps the tag an earlier write of the key gave (a delivery report's mark does not know the number).
 */
export interface StoreWrite {
	key: string;
	value: string | null;
	ttlMs?: number;
	phone?: string;
}

export interface StoreDecision<T> {
	writes: StoreWrite[];
	result: T;
}

/**
 * What the caller believes the keys hold (in the order of the keys) and the store's time it
 * believes it is, e.g. from its own last update of them. A store whose reads cost a round trip
 * (Redis) may decide on the guess first and write only if every key still holds its guessed value,
 * else read and decide again; the others ignore it. A wrong guess costs a round trip, never a
 * wrong write; a right one saves the read.
 */
export interface StoreGuess {
	values: ReadonlyArray<string | undefined>;
	now: number;
}

export type StoreKind = 'redis' | 'sqlite' | 'memory';

export interface DurableStore {
	readonly kind: StoreKind;
	/** Names the store for hints and errors (never a password): "Redis at 127.0.0.1:6379", "SQLite file …". */
	readonly label: string;
	/** The store's clock in ms since the epoch: one clock for every process that shares the store. */
	now(): Promise<number>;
	/** Current values; an expired or absent key reads as undefined. */
	read(keys: readonly string[]): Promise<Array<string | undefined>>;
	/**
	 * Atomic read-decide-write over `keys`. Writes may touch only those keys. Throws StoreUnavailable
	 * when the store cannot be reached or answers something unexpected, or when it may lose keys
	 * that must not vanish early (a Redis that may evict: store/redis/evictionRules.ts); then nothing was written,
	 * unless its `maybeWritten` is true (the writes were sent and the answer was lost or garbled).
	 * An error thrown by `decide` is passed on as it is, with nothing written.
	 */
	update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>, guess?: StoreGuess): Promise<T>;
}

/** Where a store is, as its label says ("host:port/db" of a Redis): the credential's and n8n's queue Redis may be one server. */
// Stryker disable next-line Regex: without ^ the greedy .* still matches from the start.
export const placeOf = (label: string) => label.replace(/^.* at /, '');

/** Whether two stores are one: the same object, or two connections to one Redis. */
export const sameStore = (one: DurableStore, other: DurableStore): boolean => one === other || (one.kind === 'redis' && other.kind === 'redis' && placeOf(one.label) === placeOf(other.label));

/**
 * The store could not be used; `store` names it (a label), `message` says what failed and names
 * the store (no secrets). `maybeWritten`: an update's writes had been sent when it failed, so they
 * may have been applied; read again to know.
 */
export class StoreUnavailable extends Error {
	readonly maybeWritten: boolean;

	constructor(
		readonly store: string,
		message: string,
		options?: { cause?: unknown; maybeWritten?: boolean },
	) {
		super(message, options?.cause === undefined ? undefined : { cause: options.cause });
		this.name = 'StoreUnavailable';
		this.maybeWritten = options?.maybeWritten ?? false;
	}
}
