/**
 * The opt-out list of one gateway account (issue 34): numbers that said no, which no Send of that
 * account texts. One key per account and number; the store hashes key names (keyName.ts), and the
 * value is only the time the number was added, so the store never holds a number in plain text.
 * Kept until removed: the key kind is not in evictionRules.ts's may-vanish list, so a Redis that may
 * evict refuses it (a vanished entry would text a person who said no).
 */
import type { DurableStore, StoreWrite } from './durableStore';

/** Numbers per store update: one atomic write each, small enough for one Redis script. */
const NUMBERS_PER_UPDATE = 100;

/** Numbers as Send normalises them (checks/phone.ts checkMobileNumber), so "+86 138…" and "138…" are one entry. */
export const optOutKey = (account: string, phone: string) => `opt-out|${account}|${phone}`;

/**
 * How many numbers the list holds, kept beside it for Usage → Get (a store cannot count hashed
 * keys). Numbers listed before the count existed (versions before Usage → Get) are not in it.
 */
export const optOutSizeKey = (account: string) => `opt-out-size|${account}`;
const sizeOf = (value: string | undefined) => Math.max(0, Math.floor(Number(value) || 0));

/** The list's size as counted (see optOutSizeKey). */
export async function readOptOutSize(store: DurableStore, account: string): Promise<number> {
	return sizeOf((await store.read([optOutSizeKey(account)]))[0]);
}

const unique = (phones: readonly string[]) => [...new Set(phones)];

function chunks<T>(values: T[]): T[][] {
	const parts: T[][] = [];
	for (let start = 0; start < values.length; start += NUMBERS_PER_UPDATE) parts.push(values.slice(start, start + NUMBERS_PER_UPDATE));
	return parts;
}

/** When each listed number was added (ms since the epoch); a number not listed is absent. One read for all. */
export async function readOptOuts(store: DurableStore, account: string, phones: readonly string[]): Promise<Map<string, number>> {
	const numbers = unique(phones);
	const values = numbers.length === 0 ? [] : await store.read(numbers.map((phone) => optOutKey(account, phone)));
	const listed = new Map<string, number>();
	numbers.forEach((phone, index) => {
		const value = values[index];
		// Any value lists the number: an unreadable one must not text a person who said no.
		if (value !== undefined) listed.set(phone, Number.isFinite(Number(value)) ? Number(value) : 0);
	});
	return listed;
}

/**
 * Adds numbers (kept until removed) or removes them. Returns when each number was listed before
 * the change (absent: it was not). A number already listed keeps the time it was first added.
 */
export async function changeOptOuts(store: DurableStore, account: string, phones: readonly string[], change: 'add' | 'remove'): Promise<Map<string, number>> {
	const before = new Map<string, number>();
	for (const part of chunks(unique(phones))) {
		const keys = part.map((phone) => optOutKey(account, phone));
		const sizeKey = optOutSizeKey(account);
		const listed = await store.update([...keys, sizeKey], (values, now) => {
			const writes = keys.flatMap((key, index): StoreWrite[] => {
				if (change === 'add') return values[index] === undefined ? [{ key, value: String(now) }] : [];
				return values[index] === undefined ? [] : [{ key, value: null }];
			});
			// The list's size changes in the same update as its entries, so it stays exact.
			const size = Math.max(0, sizeOf(values[keys.length]) + (change === 'add' ? writes.length : -writes.length));
			if (writes.length > 0) writes.push({ key: sizeKey, value: String(size) });
			return { writes, result: values.slice(0, keys.length) };
		});
		part.forEach((phone, index) => {
			const value = listed[index];
			if (value !== undefined) before.set(phone, Number.isFinite(Number(value)) ? Number(value) : 0);
		});
	}
	return before;
}
