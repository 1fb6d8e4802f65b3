/**
 * The telephone identification quota: the gateway gives non-members 100 free identifications a day
 * (docs/gateway-api.md). The package counts them per account (store/guardScope.ts) and China
 * calendar day in the durable store; with the Free Quota plan it refuses, before calling, what the day has no room for.
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { TELEPHONE_FREE_DAILY_CALLS } from '../gateway/catalog';
import { plural } from '../output/plural';
import { scopesOf, type GuardScope } from '../store/guardScope';
import { chinaDay, chinaIso, nextChinaMidnight } from './chinaTime';

export type TelephonePlanKind = 'notSet' | 'member' | 'freeQuota';

export interface TelephonePlan {
	kind: TelephonePlanKind;
	dailyFreeCalls: number;
	/** Refuse calls beyond the quota before calling (Free Quota plan only). */
	refuseBeyondQuota: boolean;
}

/** The credential's plan; a credential saved before the field existed reads as not set, which changes nothing. */
export function telephonePlanOf(credentials: ICredentialDataDecryptedObject): TelephonePlan {
	const kind: TelephonePlanKind = credentials.telephonePlan === 'member' || credentials.telephonePlan === 'freeQuota' ? credentials.telephonePlan : 'notSet';
	const daily = Number(credentials.telephoneDailyFreeCalls ?? TELEPHONE_FREE_DAILY_CALLS);
	return {
		kind,
		dailyFreeCalls: Number.isFinite(daily) && daily >= 0 ? Math.floor(daily) : TELEPHONE_FREE_DAILY_CALLS,
		refuseBeyondQuota: kind === 'freeQuota' && credentials.telephoneRefuseBeyondQuota !== false,
	};
}

/** Counters live two days: long enough for a run that starts before midnight and ends after. */
export const COUNTER_TTL_MS = 2 * 24 * 3_600_000;
const counterKey = (accountKey: string, day: string) => `telephone-calls|${accountKey}|${day}`;
const countOf = (value: string | undefined) => Math.max(0, Number(value) || 0);

export interface QuotaDay {
	day: string;
	/** When the quota starts again, ISO China time. */
	resetsAt: string;
}

function dayOf(now: number): QuotaDay {
	return { day: chinaDay(now), resetsAt: chinaIso(nextChinaMidnight(now)) };
}

/** What the day's count of the account's former scopes and earlier stores adds (read only). */
async function otherCount(guard: GuardScope, day: string): Promise<{ keys: string[]; earlier: number }> {
	let earlier = 0;
	for (const store of guard.earlier) for (const value of await store.read(scopesOf(guard).map((scope) => counterKey(scope, day)))) earlier += countOf(value);
	return { keys: guard.former.map((scope) => counterKey(scope, day)), earlier };
}

const sumOf = (values: ReadonlyArray<string | undefined>) => values.reduce((sum, value) => sum + countOf(value), 0);

/** A day's count of calls under every scope of the account, for Usage → Get. */
export async function readCallsOn(guard: GuardScope, day: string): Promise<number> {
	const other = await otherCount(guard, day);
	return sumOf(await guard.store.read([counterKey(guard.scope, day), ...other.keys])) + other.earlier;
}

/** Takes up to `wanted` of today's free calls; `granted` may be fewer. */
export async function reserveCalls(guard: GuardScope, plan: TelephonePlan, wanted: number) {
	const now = await guard.store.now();
	const today = dayOf(now);
	const key = counterKey(guard.scope, today.day);
	const other = await otherCount(guard, today.day);
	return await guard.store.update([key, ...other.keys], ([value, ...former]) => {
		const own = countOf(value);
		const used = own + sumOf(former) + other.earlier;
		const granted = Math.max(0, Math.min(wanted, plan.dailyFreeCalls - used));
		// Stryker disable next-line ConditionalExpression,EqualityOperator: granting 0 would write the count it read, with the same two-day expiry; nothing reads the difference
		return { writes: granted > 0 ? [{ key, value: String(own + granted), ttlMs: COUNTER_TTL_MS }] : [], result: { ...today, used, granted } };
	});
}

/** Adds the calls made (or gives back reserved ones not made, with a negative change); returns the day's count. */
export async function countCalls(guard: GuardScope, day: string | undefined, change: number): Promise<number> {
	const counted = day ?? chinaDay(await guard.store.now());
	const key = counterKey(guard.scope, counted);
	const other = await otherCount(guard, counted);
	return await guard.store.update([key, ...other.keys], ([value, ...former]) => {
		const count = Math.max(0, countOf(value) + change);
		// Stryker disable next-line ConditionalExpression: a change of 0 would write the count it read, with the same two-day expiry; nothing reads the difference
		return { writes: change === 0 ? [] : [{ key, value: String(count), ttlMs: COUNTER_TTL_MS }], result: count + sumOf(former) + other.earlier };
	});
}

/** "87 of 100 free calls today", or "87 calls today" when the plan gives no quota. */
export function quotaLine(plan: TelephonePlan, count: number): string {
	return plan.kind === 'freeQuota' ? `${count} of ${plan.dailyFreeCalls} free calls today` : `${plural(count, 'call')} today`;
}

export function quotaRefusal(plan: TelephonePlan, used: number, resetsAt: string) {
	return {
		message: `The free telephone quota of ${plan.dailyFreeCalls} identifications a day is used up (${used} made today, China time)`,
		description: `No call was made for this item. The quota starts again at ${resetsAt}. To go on now: if the account is a member, set the credential's Telephone Plan to Member; if it has a larger daily quota, raise Free Calls per Day; or turn off Refuse Calls Beyond the Quota to let the gateway decide.`,
	};
}
