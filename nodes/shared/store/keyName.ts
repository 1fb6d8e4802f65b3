import { createHash, createHmac, createSecretKey, type KeyObject } from 'crypto';

import { nameSecret, type NameSecret } from './nameSecret';

/**
 * The name a store keeps a caller's key under: a keyed hash (HMAC-SHA-256 with this installation's
 * secret, nameSecret.ts), so phone numbers, plates or task ids in a key never appear in Redis's or
 * the SQLite file's key names, and cannot be found by hashing every 11-digit number either.
 * `dgw:~` sets these names apart from the unkeyed ones of earlier versions (legacyKeyName).
 */
export function storedKeyName(key: string): string {
	return `${NAME_PREFIX}${keyedHash(key)}`;
}

/** Ends the group part of a key (`group>rest`, see groupedKey). */
const GROUP_END = '>';

/** Every name this version writes starts so; '~' sorts after every base64url character. */
export const NAME_PREFIX = 'dgw:~';

/**
 * What naming keeps for the secret in use, made again when it changes (tests): the secret as a
 * KeyObject (given a Buffer, createHmac builds one on every call, about 25 µs of the 30 a name cost
 * on Node 24; a send names about 30 keys), and the last names of texts that recur within one store
 * update (a number's tag on each of its writes, a group's hash on each key of the group).
 */
let naming: { secret: NameSecret; key: KeyObject; tags: Map<string, string>; groups: Map<string, string>; check?: string } | undefined;
function namingNow() {
	const secret = nameSecret();
	// Stryker disable next-line ConditionalExpression: made again every time, the names are the same (only slower); a changed secret is tested.
	if (naming?.secret !== secret) naming = { secret, key: createSecretKey(secret.key), tags: new Map(), groups: new Map() };
	return naming;
}

const keyedHash = (text: string) => createHmac('sha256', namingNow().key).update(text).digest('base64url');

/** Few enough recent names that a batch's update finds them again. */
const RECENT_NAMES = 1024;
function recentHash(recent: Map<string, string>, text: string): string {
	let name = recent.get(text);
	// Stryker disable next-line ConditionalExpression: a cache; hashing again gives the same name (only slower).
	if (name === undefined) {
		// Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement,CallExpression: the bound keeps memory, not names; every name is the same with or without it.
		if (recent.size >= RECENT_NAMES) recent.delete(recent.keys().next().value as string);
		recent.set(text, (name = keyedHash(text)));
	}
	return name;
}
const plainHash = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * The names versions before keyed names gave the key (a plain SHA-256; in the SQLite file grouped
 * as storedRowKey does): the stores still read them while records written under them may live (an
 * upgrade must not forget a send record within its repeat window), and a write of the key removes them.
 */
export const legacyKeyName = (key: string) => `dgw:${plainHash(key)}`;
export function legacyRowKey(key: string): string {
	const end = key.indexOf(GROUP_END);
	if (end < 0) return legacyKeyName(key);
	return `dgw:${plainHash(key.slice(0, end)).slice(0, 10)}.${plainHash(key)}`;
}

/**
 * A key named inside a value (a send record lists the count keys it took, to give them back): the
 * value holds this keyed tag, never the key's text, which may hold a phone number.
 */
export function valueTag(key: string): string {
	return keyedHash(`value|${key}`).slice(0, 22);
}

/**
 * Every store keeps, under this fixed name, a keyed hash of a fixed text (keyCheck): a process
 * whose secret differs from the one the store was first used with would name every record
 * differently, not see them, and could send a message again. It is refused instead (keyMismatch).
 */
export const KEY_CHECK_NAME = `${NAME_PREFIX}key-check`;
export function keyCheck(): string {
	const current = namingNow();
	// Asked by every Redis update: hashed once per secret.
	return (current.check ??= keyedHash('key-check'));
}
export function keyMismatch(store: string): string {
	return (
		`${store} is used by n8n processes with another encryption key than this one's (from ${nameSecret().source}): the records they keep are invisible here, so nothing is sent. ` +
		`Give every n8n process that shares this store the same N8N_ENCRYPTION_KEY (or, for n8n installations of their own, the same DATA_GATEWAY_STORE_KEY); if the key was changed on purpose, delete the store's ${KEY_CHECK_NAME} entry (what was kept under the old key is then ignored and expires)`
	);
}

/** A tag for everything kept about one phone number (StoreWrite.phone): what an erase finds rows by. */
export function phoneTag(phone: string): string {
	return recentHash(namingNow().tags, `phone|${phone}`);
}

/**
 * A key in a group of keys that are written together (the send records of one batch; the message
 * and counts of one number). The name is still a keyed hash of the whole key; the SQLite store puts a
 * group's rows side by side in its key index (storedRowKey).
 */
export function groupedKey(group: string, rest: string): string {
	return `${group}${GROUP_END}${rest}`;
}

/**
 * The SQLite store's row key: for a grouped key, its group's hash and then its own, so that a
 * batch's new keys land on a few pages of the index rather than one page each (each page a batch
 * changes is written to the WAL and, at a checkpoint, to the file: bench section 9). A key without
 * a '>' keeps the name it always had; one whose text brings a '>' (a task ID from the gateway, say)
 * is grouped at it, which moves its row and nothing else: the same key always gets the same name.
 */
export function storedRowKey(key: string): string {
	const end = key.indexOf(GROUP_END);
	if (end < 0) return storedKeyName(key);
	return `${NAME_PREFIX}${recentHash(namingNow().groups, key.slice(0, end)).slice(0, 10)}.${keyedHash(key)}`;
}

/** A write's lifetime in whole ms (what Redis's PX takes), or undefined to keep it until deleted. */
export function lifetimeMs(ttlMs: number | undefined): number | undefined {
	if (ttlMs === undefined || ttlMs === 0) return undefined;
	// Stryker disable next-line EqualityOperator: 0 (and -0) returned undefined just above, so "<= 0" refuses the same values.
	if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new Error(`A store write's ttlMs must be a positive number of ms, not ${ttlMs}`);
	return Math.max(1, Math.ceil(ttlMs));
}

/** Writes may touch only the keys the update read (the compare-and-set covers only those). */
export function checkWrittenKeys(keys: readonly string[], writes: ReadonlyArray<{ key: string }>): void {
	const read = new Set(keys);
	for (const write of writes) {
		if (!read.has(write.key)) throw new Error(`A store update wrote ${write.key}, which it did not read`);
	}
}
