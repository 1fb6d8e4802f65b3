/**
 * Erasing everything the package keeps about one phone number: each store deletes the entries
 * written with that number (StoreWrite.phone, kept only as a keyed tag) and, for the SQLite file,
 * empties the WAL so that their bytes leave the disk. Run by `npm run erase-phone` (scripts/erasePhone.ts)
 * or from an installed package's dist (README).
 */
import { checkTelephoneNumber } from '../checks/phone';
import type { DurableStore } from './durableStore';
import { queueRedisSettings, nodeSqlite, storeFilePath } from './hostEnvironment';
import { MemoryStore } from './memoryStore';
import { redisFor, releaseRedis, type RedisSettings } from './redis/connection';
import { RedisDurableStore } from './redisStore';
import { storeFileExists } from './sqliteFiles';
import { SqliteDurableStore } from './sqliteStore';

/**
 * The number as the nodes keep it (checks/phone.ts, the rules the SMS and Telephone nodes check it
 * by): a mobile number's 11 digits, or a landline's with its area code; separators, +86 and 0086 dropped.
 */
export function normalizedPhone(text: string): string {
	const checked = checkTelephoneNumber(text);
	if (!checked.ok) throw new Error(`${checked.value}: give the number as the SMS or Telephone node was given it`);
	return checked.value;
}

/** Deletes what this store keeps about the number; returns how many entries it deleted. */
export async function erasePhone(store: DurableStore, phone: string): Promise<number> {
	const number = normalizedPhone(phone);
	if (store instanceof SqliteDurableStore || store instanceof RedisDurableStore || store instanceof MemoryStore) return await store.erasePhone(number);
	throw new Error(`${store.label} cannot erase by phone number`);
}

export interface EraseTarget {
	/** The store's label (never a password). */
	store: string;
	erased: number;
}

/**
 * Erases the number in every store this host's n8n may use: the SQLite file (DATA_GATEWAY_STORE_FILE
 * or n8n's user folder), n8n's queue Redis in queue mode, and each Redis given (a credential's
 * Shared Redis URL and password). Run with n8n's own environment, so that the key names match.
 */
export async function erasePhoneEverywhere(phone: string, redis: RedisSettings[] = []): Promise<EraseTarget[]> {
	const number = normalizedPhone(phone);
	const done: EraseTarget[] = [];
	const sqlite = nodeSqlite();
	if (sqlite && storeFileExists(storeFilePath())) {
		const store = new SqliteDurableStore(sqlite, storeFilePath());
		try {
			done.push({ store: store.label, erased: await store.erasePhone(number) });
		} finally {
			// Stryker disable next-line CallExpression: whether the file stays open shows only in timing (the store's checkpoint thread may hold it too).
			store.close();
		}
	}
	const queue = queueRedisSettings();
	const targets = [...(queue ? [{ settings: queue, label: "n8n's queue Redis" }] : []), ...redis.map((settings) => ({ settings, label: 'the Redis given' }))];
	for (const [index, { settings, label }] of targets.entries()) {
		// Stryker disable next-line StringLiteral: each target's connection is released before the next is taken, so one name for all would do as well.
		const owner = `erase:${index}`;
		const connection = redisFor(settings, owner);
		try {
			const store = new RedisDurableStore(connection, `${label} at ${connection.where}`, () => 'check its URL and password');
			done.push({ store: store.label, erased: await store.erasePhone(number) });
		} finally {
			releaseRedis(owner);
		}
	}
	return done;
}
