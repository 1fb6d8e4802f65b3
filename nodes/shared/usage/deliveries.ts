/**
 * Delivered and failed SMS, counted for Usage → Get at the moment a final status is first marked
 * (store/sendsByTask.ts markReported: an SMS Trigger's report, Send and Check Delivery, Check Pending
 * Deliveries), in one store update per mark. Counted on the China day the SMS was sent, so a day's
 * pending is its sent minus its delivered and failed, and under the account scope its send record
 * names: the SMS Trigger has no credential, and the scope outlives a rotated App Code.
 */
import { SMS_TASK_STATUS } from '../gateway/catalog';
import { chinaDay } from '../lookups/chinaTime';
import type { DurableStore } from '../store/durableStore';
import { addUsage, type DayCounts } from './counts';

/** What a mark says of one task (store/sendsByTask.ts MarkedReport). */
interface FirstMark {
	first: boolean;
	before?: { sentAt?: number; scope?: string };
}

/** The counts of the marks this update made first, by account scope and day sent. A report whose send (or its scope) is unknown is not counted. */
export function deliveryCounts(marks: ReadonlyMap<string, FirstMark>, statusOf: ReadonlyMap<string, number>): DayCounts[] {
	const byDay = new Map<string, DayCounts>();
	for (const [taskId, mark] of marks) {
		const sentAt = mark.before?.sentAt;
		const scope = mark.before?.scope;
		if (!mark.first || scope === undefined || sentAt === undefined) continue;
		const status = statusOf.get(taskId);
		const name = status === SMS_TASK_STATUS.delivered ? 'sms.delivered' : status === SMS_TASK_STATUS.failed ? 'sms.failed' : undefined;
		if (!name) continue;
		const day = chinaDay(sentAt);
		const entry = byDay.get(`${scope}|${day}`) ?? { account: scope, day, counts: {} };
		entry.counts[name] = (entry.counts[name] ?? 0) + 1;
		byDay.set(`${scope}|${day}`, entry);
	}
	return [...byDay.values()];
}

/** Adds what `marks` made final to the usage counts, in one update. A store that fails costs the counts, never the report. */
export async function countDeliveries(store: DurableStore, marks: ReadonlyMap<string, FirstMark>, statusOf: ReadonlyMap<string, number>): Promise<void> {
	try {
		await addUsage(store, deliveryCounts(marks, statusOf));
	} catch {
		// The report is marked and handed on; only Usage → Get misses it (its pending stays one higher).
	}
}
