/**
 * Money counted in the durable store, per account (its scope: store/guardScope.ts, never the appCode):
 * what one execution spent (the spending cap), what one China calendar day and one China calendar
 * month spent (the budgets). Kept in the store, not in process memory, so that a Wait, an idle half
 * hour or a resume on another worker changes nothing, and every execution, workflow and n8n process
 * that shares the store counts against the same day and month.
 *
 * Amounts are whole 1/10000 yuan (0.035 yuan = 350), so sums never drift. Every change is one
 * atomic store update over the three keys: two processes cannot both take the last yuan.
 */
import { chinaDay, chinaIso, nextChinaMidnight } from '../lookups/chinaTime';
import type { DurableStore } from '../store/durableStore';
import { scopesOf, type GuardScope } from '../store/guardScope';

export const toUnits = (yuan: number): number => Math.round(yuan * 10_000);
export const toYuan = (units: number): number => units / 10_000;
/** "12.40", "0.035": two decimals at least, as many as the units have (up to four). */
export const yuanText = (units: number): string => toYuan(units).toFixed(4).replace(/0{1,2}$/, '');

/** The limits of one credential, in yuan; 0 = none. */
export interface MoneyLimits {
	capYuan: number;
	dailyYuan: number;
	monthlyYuan: number;
}

/**
 * How long each count is kept after its last change. An execution's spend must outlive any Wait a
 * workflow may hold between two paid nodes: 35 days (an execution resumed after a longer Wait
 * starts its cap at 0). A day's count outlives its day, a month's its month, for runs that reserved
 * before midnight and give back after.
 */
export const LEDGER_KEEP_MS = {
	execution: 35 * 24 * 3_600_000,
	day: 3 * 24 * 3_600_000,
	month: 62 * 24 * 3_600_000,
};

export type LimitName = 'cap' | 'day' | 'month';

/** Where a reservation was counted: the execution's key, and the China day and month of the store's clock. */
export interface LedgerPeriod {
	day: string;
	month: string;
	/** 00:00 China time of the next day and of the next month's first day, ISO China time. */
	dayResetsAt: string;
	monthResetsAt: string;
}

/** What the three keys held after a reservation (or before a refused one), in units. */
export interface LedgerSpent {
	execution: number;
	day: number;
	month: number;
}

export type Reservation =
	| { ok: true; period: LedgerPeriod; spent: LedgerSpent }
	| { ok: false; period: LedgerPeriod; spent: LedgerSpent; limit: LimitName; limitUnits: number };

function periodAt(now: number): LedgerPeriod {
	const day = chinaDay(now);
	const [year, month] = day.split('-').map(Number) as [number, number];
	const nextMonth = Date.UTC(year, month, 1) - 8 * 3_600_000;
	return { day, month: day.slice(0, 7), dayResetsAt: chinaIso(nextChinaMidnight(now)), monthResetsAt: chinaIso(nextMonth) };
}

/** The store's clock minus this host's, learned at each update: the period is guessed without a round trip, and checked inside it. */
const clockOffsets = new WeakMap<DurableStore, number>();

const unitsOf = (value: string | undefined) => Math.max(0, Math.floor(Number(value) || 0));

export class SpendLedger {
	private readonly store: DurableStore;

	constructor(
		/** The account's scope (store/guardScope.ts): counts are written under its scope, and add up with its former scopes' and earlier stores'. */
		private readonly guard: GuardScope,
		private readonly executionId: string,
		private readonly limits: MoneyLimits,
	) {
		this.store = guard.store;
	}

	get storeLabel(): string {
		return this.store.label;
	}

	/** The keys written: the execution's, the day's and the month's, under the account's scope. */
	private keys(period: LedgerPeriod): [string, string, string] {
		const account = this.guard.scope;
		return [`spend|${account}|execution|${this.executionId}`, `spend|${account}|day|${period.day}`, `spend|${account}|month|${period.month}`];
	}

	/** The day's and month's keys of the scopes that still count (read, never written): day, month, day, month… */
	private formerKeys(period: LedgerPeriod, scopes = this.guard.former): string[] {
		return scopes.flatMap((account) => [`spend|${account}|day|${period.day}`, `spend|${account}|month|${period.month}`]);
	}

	/** What earlier stores counted for the day and the month under every scope of the account. */
	private async earlierSpent(period: LedgerPeriod): Promise<[number, number]> {
		const sum: [number, number] = [0, 0];
		for (const store of this.guard.earlier) {
			const values = await store.read(this.formerKeys(period, scopesOf(this.guard)));
			addPairs(sum, values);
		}
		return sum;
	}

	/**
	 * Counts `units` on the execution, the day and the month, unless that would pass a limit (then
	 * nothing is written and the result names the limit). `force` counts without checking: money that
	 * may already be billed.
	 */
	async reserve(units: number, { force = false } = {}): Promise<Reservation> {
		let now = Date.now() + (clockOffsets.get(this.store) ?? 0);
		for (let tries = 0; ; tries++) {
			const reservation = await this.reserveIn(periodAt(now), units, force);
			// decide saw another day than the keys were named for (midnight passed, or the clock guess was off): name them again.
			if (!('movedTo' in reservation)) return reservation;
			if (tries >= 2) throw new Error(`The store's China day kept changing while the spend was counted (now ${chinaIso(reservation.movedTo)})`);
			now = reservation.movedTo;
		}
	}

	private async reserveIn(period: LedgerPeriod, units: number, force: boolean): Promise<Reservation | { movedTo: number }> {
		const keys = this.keys(period);
		const earlier = await this.earlierSpent(period);
		const limits: Array<[LimitName, number]> = [
			['cap', toUnits(this.limits.capYuan)],
			['day', toUnits(this.limits.dailyYuan)],
			['month', toUnits(this.limits.monthlyYuan)],
		];
		return await this.store.update<Reservation | { movedTo: number }>([...keys, ...this.formerKeys(period)], (values, now) => {
			clockOffsets.set(this.store, now - Date.now());
			if (chinaDay(now) !== period.day) return { writes: [], result: { movedTo: now } };
			const own = values.slice(0, 3).map(unitsOf) as [number, number, number];
			const other = addPairs([earlier[0], earlier[1]], values.slice(3));
			const spent = { execution: own[0], day: own[1] + other[0], month: own[2] + other[1] };
			const next = [spent.execution + units, spent.day + units, spent.month + units];
			if (!force) {
				for (const [index, [limit, limitUnits]] of limits.entries()) {
					if (limitUnits > 0 && (next[index] as number) > limitUnits) return { writes: [], result: { ok: false, period, spent, limit, limitUnits } };
				}
			}
			const keep = [LEDGER_KEEP_MS.execution, LEDGER_KEEP_MS.day, LEDGER_KEEP_MS.month];
			const writes = units === 0 ? [] : keys.map((key, index) => ({ key, value: String(own[index] + units), ttlMs: keep[index] }));
			return { writes, result: { ok: true, period, spent: { execution: next[0] as number, day: next[1] as number, month: next[2] as number } } };
		});
	}

	/** Gives back `units` counted in `period` (the reservation's, even when the day has passed since), under the scope it was counted in. */
	async refund(units: number, period: LedgerPeriod): Promise<LedgerSpent> {
		const keys = this.keys(period);
		const earlier = await this.earlierSpent(period);
		return await this.store.update([...keys, ...this.formerKeys(period)], (values) => {
			const next = values.slice(0, 3).map((value) => Math.max(0, unitsOf(value) - units)) as [number, number, number];
			const other = addPairs([earlier[0], earlier[1]], values.slice(3));
			const keep = [LEDGER_KEEP_MS.execution, LEDGER_KEEP_MS.day, LEDGER_KEEP_MS.month];
			const writes = units <= 0 ? [] : keys.map((key, index) => ({ key, value: String(next[index]), ttlMs: keep[index] }));
			return { writes, result: { execution: next[0], day: next[1] + other[0], month: next[2] + other[1] } };
		});
	}

	/** What the execution, today and this month have spent, at the store's time. */
	async spent(): Promise<{ period: LedgerPeriod; spent: LedgerSpent }> {
		const period = periodAt(await this.store.now());
		const [values, earlier] = await Promise.all([this.store.read([...this.keys(period), ...this.formerKeys(period)]), this.earlierSpent(period)]);
		const [execution, day, month] = values.slice(0, 3).map(unitsOf) as [number, number, number];
		const other = addPairs(earlier, values.slice(3));
		return { period, spent: { execution, day: day + other[0], month: month + other[1] } };
	}
}

/** Adds day, month, day, month… values to a [day, month] sum. */
function addPairs(sum: [number, number], values: ReadonlyArray<string | undefined>): [number, number] {
	values.forEach((value, index) => (sum[index % 2] += unitsOf(value)));
	return sum;
}
