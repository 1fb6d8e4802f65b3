/**
 * What one gateway account did, counted per China calendar day and month in the durable store
 * (issue 43): calls, spend, reuse, refusals, SMS sent, skipped and delivered. Counted whether or not
 * a cap or budget is set. A node run adds its counts in one atomic store update over its day's and
 * its month's key, so processes counting at once never lose a count; the values hold counts only,
 * never a number, plate or text. Read by Usage → Get (usage/report.ts).
 */
import { chinaDay } from '../lookups/chinaTime';
import type { DurableStore, StoreWrite } from '../store/durableStore';
import { hostClock } from '../store/hostClock';

/**
 * Counters by name, whole numbers: `calls.<operation>`, `spentUnits` and `savedUnits` (1/10000
 * yuan, as money/ledger.ts counts), `reused`, `refused.<cap|day|month|quota>`, `sms.sent`,
 * `sms.segments`, `sms.skipped.<reason>`, `sms.delivered`, `sms.failed`. A name a newer version
 * adds is summed like the others: an older reader keeps it.
 */
export type UsageCounts = Record<string, number>;

/**
 * How long a day's and a month's counts are kept after their last change (docs/retention.md): a day
 * for 93 days, so Usage → Get can answer for any day of the last three months; a month for 13 months.
 */
export const USAGE_KEEP_MS = {
	day: 93 * 24 * 3_600_000,
	month: 400 * 24 * 3_600_000,
};

export const usageDayKey = (account: string, day: string) => `usage|${account}|day|${day}`;
export const usageMonthKey = (account: string, month: string) => `usage|${account}|month|${month}`;

/** The counts a stored value holds; a damaged or foreign value reads as none. */
export function readCounts(value: string | undefined): UsageCounts {
	// Stryker disable next-line ConditionalExpression: JSON.parse(undefined) throws, and the catch answers the same.
	if (value === undefined) return {};
	let parsed: unknown;
	try {
		parsed = JSON.parse(value);
		// Stryker disable next-line BlockStatement: with the catch emptied, parsed stays undefined and the check below answers the same.
	} catch {
		return {};
	}
	// Stryker disable next-line ConditionalExpression: only the typeof part's "false" is equivalent (a number has no entries, a string's are letters), and the line's others are killed.
	if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
	const counts: UsageCounts = {};
	for (const [name, count] of Object.entries(parsed)) if (Number.isSafeInteger(count) && (count as number) > 0) counts[name] = count as number;
	return counts;
}

/** The sum of counts, leaving out zeros. */
export function sumCounts(...all: UsageCounts[]): UsageCounts {
	const sum: UsageCounts = {};
	for (const counts of all) {
		for (const [name, count] of Object.entries(counts)) {
			const total = (sum[name] ?? 0) + count;
			if (total > 0) sum[name] = total;
			else delete sum[name];
		}
	}
	return sum;
}

export const isEmpty = (counts: UsageCounts) => Object.values(counts).every((count) => count === 0);

/** The store's clock minus this host's (store/hostClock.ts: the clock of the stores on this host), learned at each update. */
const clockOffsets = new WeakMap<DurableStore, number>();

/** Counts to add to one account's day (China calendar day, `2026-11-24`); the month is the day's. */
export interface DayCounts {
	account: string;
	/** The day they belong to; undefined: the store's today, read inside the update. */
	day?: string;
	counts: UsageCounts;
}

/**
 * Adds counts to their days and months in ONE atomic store update. Counts for "today" are put on
 * the day the store's clock says inside the update; if that is not the day the keys were named for
 * (midnight passed meanwhile), the keys are named again.
 */
export async function addUsage(store: DurableStore, entries: readonly DayCounts[]): Promise<void> {
	const wanted = entries.filter((entry) => !isEmpty(entry.counts));
	if (wanted.length === 0) return;
	// Today as this host guesses the store's clock (no round trip); the update checks it.
	let today = chinaDay(hostClock.now() + (clockOffsets.get(store) ?? 0));
	for (let tries = 0; tries < 3; tries++) {
		const byKey = new Map<string, { counts: UsageCounts[]; ttlMs: number }>();
		for (const { account, day = today, counts } of wanted) {
			for (const [key, ttlMs] of [
				[usageDayKey(account, day), USAGE_KEEP_MS.day],
				[usageMonthKey(account, day.slice(0, 7)), USAGE_KEEP_MS.month],
			] as const) {
				const entry = byKey.get(key) ?? { counts: [], ttlMs };
				entry.counts.push(counts);
				byKey.set(key, entry);
			}
		}
		const keys = [...byKey.keys()];
		const named = today;
		const moved = await store.update(keys, (values, now) => {
			clockOffsets.set(store, now - hostClock.now());
			if (wanted.some((entry) => entry.day === undefined) && chinaDay(now) !== named) return { writes: [], result: chinaDay(now) };
			const writes: StoreWrite[] = keys.map((key, index) => {
				const { counts, ttlMs } = byKey.get(key) as { counts: UsageCounts[]; ttlMs: number };
				return { key, value: JSON.stringify(sumCounts(readCounts(values[index]), ...counts)), ttlMs };
			});
			return { writes, result: undefined };
		});
		if (moved === undefined) return;
		today = moved;
	}
	throw new Error("The store's China day kept changing while the usage was counted");
}

/** The counts of a day and of that day's month, summed over `accounts` (an account's scopes), in one read. */
export async function readUsage(store: DurableStore, accounts: readonly string[], day: string): Promise<{ day: UsageCounts; month: UsageCounts }> {
	const values = await store.read(accounts.flatMap((account) => [usageDayKey(account, day), usageMonthKey(account, day.slice(0, 7))]));
	const read = (parity: number) => sumCounts(...values.filter((_, index) => index % 2 === parity).map(readCounts));
	return { day: read(0), month: read(1) };
}
