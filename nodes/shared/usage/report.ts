/**
 * Usage → Get's answer for one account (docs/usage.md): today's and this month's counts (China
 * time), a past day's on request, the budgets and what is left of them, the telephone quota and the
 * opt-out list's size. Reads only: no gateway call, no store update.
 */
import type { IDataObject } from 'n8n-workflow';

import { OPERATIONS, type OperationName } from '../gateway/catalog';
import { chinaDay, chinaIso, nextChinaMidnight } from '../lookups/chinaTime';
import { readCallsOn, type TelephonePlan } from '../lookups/telephoneQuota';
import { SpendLedger, toUnits, toYuan, type MoneyLimits } from '../money/ledger';
import { priceOf } from '../money/spend';
import { sameStore, type DurableStore } from '../store/durableStore';
import { scopesOf, type GuardScope } from '../store/guardScope';
import { readOptOutSize } from '../store/optOutList';
import { readUsage, sumCounts, USAGE_KEEP_MS, type UsageCounts } from './counts';

/** Where the counts are: the credential's store, and the store delivery reports are marked in (the same one unless the credential has a Redis). */
export interface UsageStores {
	store: DurableStore;
	deliveryStore: DurableStore;
}

const DAY_MS = 24 * 3_600_000;
/** The oldest day Usage → Get answers for: what USAGE_KEEP_MS.day keeps. */
export const USAGE_DAYS_KEPT = Math.floor(USAGE_KEEP_MS.day / DAY_MS);

/** Counts whose names start with `prefix`, without it. */
function group(counts: UsageCounts, prefix: string): IDataObject {
	const found: IDataObject = {};
	for (const [name, count] of Object.entries(counts)) if (name.startsWith(prefix)) found[name.slice(prefix.length)] = count;
	return found;
}

const yuan = (units: number) => Math.round(units) / 10_000;

/** One period's counts as Usage → Get shows them. */
export function presentCounts(counts: UsageCounts): IDataObject {
	const calls = group(counts, 'calls.') as Record<string, number>;
	const paid: IDataObject = {};
	const free: IDataObject = {};
	for (const [operation, count] of Object.entries(calls)) (priceOf(operation as OperationName) > 0 ? paid : free)[OPERATIONS[operation as OperationName]?.label ?? operation] = count;
	const sent = counts['sms.sent'] ?? 0;
	const delivered = counts['sms.delivered'] ?? 0;
	const failed = counts['sms.failed'] ?? 0;
	return {
		spentYuan: yuan(counts.spentUnits ?? 0),
		paidCalls: paid,
		freeCalls: free,
		refused: { cap: 0, dailyBudget: 0, monthlyBudget: 0, telephoneQuota: 0, ...renamed(group(counts, 'refused.'), { day: 'dailyBudget', month: 'monthlyBudget', quota: 'telephoneQuota' }) },
		reused: { answers: counts.reused ?? 0, savedYuan: yuan(counts.savedUnits ?? 0) },
		sms: {
			sent,
			segments: counts['sms.segments'] ?? 0,
			skipped: { repeat: 0, optedOut: 0, outsideWindow: 0, ...group(counts, 'sms.skipped.') },
			delivered,
			failed,
			pending: Math.max(0, sent - delivered - failed),
		},
	};
}

function renamed(values: IDataObject, names: Record<string, string>): IDataObject {
	return Object.fromEntries(Object.entries(values).map(([name, value]) => [names[name] ?? name, value]));
}

/**
 * Where the account's counts may be, each store once: the credential's, those before it (a Redis
 * added, queue mode: store/openStore.ts earlierStoresOf), and where delivery reports are marked.
 * Each count was added to one of them only, so their sum counts nothing twice.
 */
export function storesOfCounts({ store, deliveryStore }: UsageStores, guard: GuardScope): DurableStore[] {
	const stores: DurableStore[] = [];
	for (const candidate of [store, ...guard.earlier, deliveryStore]) if (!stores.some((kept) => sameStore(kept, candidate))) stores.push(candidate);
	return stores;
}

/** The account's counts of a day and its month: every scope that still counts, in every store that may hold them. */
async function countsOf(stores: DurableStore[], guard: GuardScope, day: string) {
	const found = await Promise.all(stores.map(async (store) => await readUsage(store, scopesOf(guard), day)));
	return { day: sumCounts(...found.map((counts) => counts.day)), month: sumCounts(...found.map((counts) => counts.month)) };
}

/** A budget as the ledger counts it (money/ledger.ts, the store's figure the refusals use), or null when none is set. */
function budget(limitYuan: number, countedUnits: number, resetsAt: string): IDataObject | null {
	if (limitYuan <= 0) return null;
	return { budgetYuan: limitYuan, countedYuan: toYuan(countedUnits), leftYuan: toYuan(Math.max(0, toUnits(limitYuan) - countedUnits)), resetsAt };
}

export interface UsageRequest {
	/** The account's scope (store/guardScope.ts): its counts, budgets, quota and opt-out list. */
	guard: GuardScope;
	limits: MoneyLimits;
	telephone: TelephonePlan;
	/** A past China day to show too, `2026-11-24`; checked by checkPastDay. */
	pastDay?: string;
}

/** The answer of Usage → Get: one item. */
export async function usageReport(stores: UsageStores, request: UsageRequest): Promise<IDataObject> {
	const { store } = stores;
	const now = await store.now();
	const today = chinaDay(now);
	const countStores = storesOfCounts(stores, request.guard);
	const current = await countsOf(countStores, request.guard, today);
	// Stryker disable next-line StringLiteral: the execution a ledger is made for matters to its reservations, not to what it reads as spent.
	const ledger = await new SpendLedger(request.guard, 'usage-report', request.limits).spent();
	const telephoneUsed = await readCallsOn(request.guard, today);
	const report: IDataObject = {
		today: { date: today, ...presentCounts(current.day) },
		thisMonth: { month: today.slice(0, 7), ...presentCounts(current.month) },
	};
	if (request.pastDay) report.pastDay = { date: request.pastDay, ...presentCounts((await countsOf(countStores, request.guard, request.pastDay)).day) };
	report.budgets = {
		daily: budget(request.limits.dailyYuan, ledger.spent.day, ledger.period.dayResetsAt),
		monthly: budget(request.limits.monthlyYuan, ledger.spent.month, ledger.period.monthResetsAt),
		capPerExecutionYuan: request.limits.capYuan > 0 ? request.limits.capYuan : null,
	};
	report.telephone = {
		plan: request.telephone.kind,
		callsToday: telephoneUsed,
		freeCallsLeft: request.telephone.kind === 'member' ? null : Math.max(0, request.telephone.dailyFreeCalls - telephoneUsed),
		resetsAt: chinaIso(nextChinaMidnight(now)),
	};
	report.optOutListSize = await readOptOutSize(request.guard);
	report.asOf = chinaIso(now);
	report.store = store.label;
	return report;
}

/** A past day's problem, or undefined when it is a China day within the days kept and before today. */
export function checkPastDay(day: string, now: number): string | undefined {
	// Stryker disable next-line Regex: a text before the date fails Date.parse or the round trip after it all the same.
	if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
		return `"${day}" is not a date like 2026-11-24`;
	}
	const today = chinaDay(now);
	if (day > today) return `${day} is after today (${today}, China time)`;
	const oldest = chinaDay(now - (USAGE_DAYS_KEPT - 1) * DAY_MS);
	if (day < oldest) return `${day} is no longer kept: days are kept ${USAGE_DAYS_KEPT} days (the oldest is ${oldest})`;
	return undefined;
}
