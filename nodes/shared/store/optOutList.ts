/**
 * The opt-out list of one gateway account (issue 34): numbers that said no, which no Send of that
 * account texts. One key per account scope and number (store/guardScope.ts: the list follows the
 * account, not the appCode, the Base URL's spelling or the store); the store hashes key names
 * (keyName.ts), and the value is only the time the number was added, so the store never holds a
 * number in plain text. Kept until removed: the key kind is not in evictionRules.ts's may-vanish
 * list, so a Redis that may evict refuses it (a vanished entry would text a person who said no).
 */
import type { DurableStore, StoreWrite } from './durableStore';
import { scopesOf, type GuardScope } from './guardScope';

/** Numbers per store update: one atomic write each, small enough for one Redis script. */
const NUMBERS_PER_UPDATE = 100;

/** Numbers as Send normalises them (checks/phone.ts checkMobileNumber), so "+86 138…" and "138…" are one entry. */
export const optOutKey = (account: string, phone: string) => `opt-out|${account}|${phone}`;

/**
 * How much a scope's changes grew the account's list, kept beside it for Usage → Get (a store cannot
 * count hashed keys). Signed: removing a number listed under a former scope or in an earlier store
 * counts where the removal was made. The list's size is the sum over every scope and store
 * (readOptOutSize). Numbers listed before the count existed (versions before Usage → Get) are not in it.
 */
export const optOutSizeKey = (account: string) => `opt-out-size|${account}`;
const changeOf = (value: string | undefined) => Math.trunc(Number(value) || 0);

/** The account's list size as counted: every scope's change in every store that holds the list. */
export async function readOptOutSize(guard: GuardScope): Promise<number> {
	const keys = scopesOf(guard).map(optOutSizeKey);
	let size = 0;
	for (const store of [guard.store, ...guard.earlier]) for (const value of await store.read(keys)) size += changeOf(value);
	return Math.max(0, size);
}

const unique = (phones: readonly string[]) => [...new Set(phones)];

function chunks<T>(values: T[]): T[][] {
	const parts: T[][] = [];
	for (let start = 0; start < values.length; start += NUMBERS_PER_UPDATE) parts.push(values.slice(start, start + NUMBERS_PER_UPDATE));
	return parts;
}

/** Any value lists the number: an unreadable one must not text a person who said no (0: listed, time unknown). */
const addedAt = (value: string) => (Number.isFinite(Number(value)) ? Number(value) : 0);

/** The earliest time among the values that list a number, else undefined. */
function earliest(values: ReadonlyArray<string | undefined>): number | undefined {
	const times = values.filter((value) => value !== undefined).map(addedAt);
	return times.length === 0 ? undefined : Math.min(...times);
}

/** Each number's keys under every scope of the account, its own scope's first. */
export const optOutKeysOf = (guard: GuardScope, phone: string) => scopesOf(guard).map((scope) => optOutKey(scope, phone));

/** The first of a number's entries that is there (its keys in optOutKeysOf's order): what lists it. */
export const firstEntry = (values: ReadonlyArray<string | undefined>) => values.find((value) => value !== undefined);

/**
 * Each listed number's entry as stored, unread (Send tells an entry no Opt-Out > Add wrote from one
 * it did): the store in use first, under each scope of the account, then the earlier stores. One
 * read per store.
 */
export async function readOptOutEntries(guard: GuardScope, phones: readonly string[]): Promise<Map<string, string>> {
	const numbers = unique(phones);
	const entries = new Map<string, string>();
	const per = scopesOf(guard).length;
	const keys = numbers.flatMap((phone) => optOutKeysOf(guard, phone));
	for (const store of numbers.length === 0 ? [] : [guard.store, ...guard.earlier]) {
		const values = await store.read(keys);
		numbers.forEach((phone, index) => {
			const found = firstEntry(values.slice(index * per, (index + 1) * per));
			if (found !== undefined && !entries.has(phone)) entries.set(phone, found);
		});
	}
	return entries;
}

/** What the earlier stores list, by number: read only, once. */
async function earlierListed(guard: GuardScope, numbers: string[]): Promise<Map<string, number>> {
	const listed = new Map<string, number>();
	for (const store of guard.earlier) {
		const keys = numbers.flatMap((phone) => optOutKeysOf(guard, phone));
		const values = await store.read(keys);
		const per = scopesOf(guard).length;
		numbers.forEach((phone, index) => {
			const at = earliest(values.slice(index * per, (index + 1) * per));
			if (at !== undefined) listed.set(phone, Math.min(at, listed.get(phone) ?? at));
		});
	}
	return listed;
}

/** When each listed number was added (ms since the epoch); a number not listed is absent. One read per store for all. */
export async function readOptOuts(guard: GuardScope, phones: readonly string[]): Promise<Map<string, number>> {
	const numbers = unique(phones);
	if (numbers.length === 0) return new Map();
	const per = scopesOf(guard).length;
	const [values, listed] = await Promise.all([guard.store.read(numbers.flatMap((phone) => optOutKeysOf(guard, phone))), earlierListed(guard, numbers)]);
	numbers.forEach((phone, index) => {
		const at = earliest([...values.slice(index * per, (index + 1) * per), ...(listed.has(phone) ? [String(listed.get(phone))] : [])]);
		// Undefined only for a number no earlier store listed either: nothing to set.
		if (at !== undefined) listed.set(phone, at);
	});
	return listed;
}

/**
 * Adds numbers (kept until removed) or removes them. Returns when each number was listed before
 * the change (absent: it was not). A number already listed, under any scope of the account or in
 * an earlier store, keeps the time it was first added; a removal deletes it everywhere.
 */
export async function changeOptOuts(guard: GuardScope, phones: readonly string[], change: 'add' | 'remove'): Promise<Map<string, number>> {
	const before = new Map<string, number>();
	for (const part of chunks(unique(phones))) {
		const earlier = await earlierListed(guard, part);
		const keys = part.flatMap((phone) => optOutKeysOf(guard, phone));
		const per = scopesOf(guard).length;
		const sizeKey = optOutSizeKey(guard.scope);
		const listed = await guard.store.update([...keys, sizeKey], (values, now) => {
			const writes: StoreWrite[] = [];
			let sizeChange = 0;
			const found = part.map((phone, index) => {
				const own = values.slice(index * per, (index + 1) * per);
				const at = earliest([...own, ...(earlier.has(phone) ? [String(earlier.get(phone))] : [])]);
				const mine = keys.slice(index * per, (index + 1) * per);
				if (change === 'add' && own[0] === undefined) writes.push({ key: mine[0] as string, value: String(at ?? now) });
				if (change === 'remove') own.forEach((value, scope) => value !== undefined && writes.push({ key: mine[scope] as string, value: null }));
				// The account's list grows by a number listed nowhere before, and shrinks by one listed anywhere.
				if (change === 'add' ? at === undefined : at !== undefined) sizeChange += change === 'add' ? 1 : -1;
				return at;
			});
			// The list's size changes in the same update as its entries, so it stays exact.
			// Stryker disable next-line ConditionalExpression: writing an unchanged count leaves the same value.
			if (sizeChange !== 0) writes.push({ key: sizeKey, value: String(changeOf(values[keys.length]) + sizeChange) });
			return { writes, result: found };
		});
		part.forEach((phone, index) => listed[index] !== undefined && before.set(phone, listed[index] as number));
		if (change === 'remove') await removeFromEarlier(guard, part);
	}
	return before;
}

/** A removal reaches the earlier stores too: else the number would stay listed there. */
async function removeFromEarlier(guard: GuardScope, numbers: string[]): Promise<void> {
	const keys = numbers.flatMap((phone) => optOutKeysOf(guard, phone));
	for (const store of guard.earlier as DurableStore[]) {
		await store.update(keys, (values) => ({ writes: keys.filter((_, index) => values[index] !== undefined).map((key) => ({ key, value: null })), result: undefined }));
	}
}
