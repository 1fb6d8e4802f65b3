/**
 * Events that started the workflow recently, so a repeated delivery of the same event starts it
 * once. Two layers, one concept:
 * - the workflow's static data (node scope), which n8n loads from its database for each webhook
 *   request and saves after the node answers: shared by main and webhook processes in queue mode
 *   and kept across restarts;
 * - this process's memory, which also catches a repeat that arrives while the first request's
 *   static data is not saved yet (both requests in this process).
 * Not covered: the same event reaching two different processes within the few milliseconds
 * before either has saved, and a concurrent save of another event's static data dropping this one.
 */
import { createHash } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

const expiryByEvent = new Map<string, number>();

/** Bounds this process's memory when callbacks arrive faster than the window lets them expire. */
const MAX_REMEMBERED_EVENTS = 20_000;
/** Static data is saved whole with the workflow after every start: keep it small. */
export const MAX_STORED_EVENTS = 500;
const STORED_EVENTS_FIELD = 'recentEvents';

/** True the first time `eventKey` is seen in this process within `windowMs`; remembers it from then on. */
export function isFirstSighting(eventKey: string, windowMs: number, now = Date.now()): boolean {
	// Oldest first (insertion order): stop at the first live one, so a call costs little.
	for (const [seen, expiresAt] of expiryByEvent) {
		if (expiresAt > now && expiryByEvent.size < MAX_REMEMBERED_EVENTS) break;
		expiryByEvent.delete(seen);
	}
	const expiresAt = expiryByEvent.get(eventKey);
	if (expiresAt !== undefined && expiresAt > now) return false;
	// Re-inserted, so it moves to the end of the insertion order.
	expiryByEvent.delete(eventKey);
	expiryByEvent.set(eventKey, now + windowMs);
	return true;
}

/**
 * The same check against the workflow's static data: true (and recorded) when the event is not
 * stored or has expired. Keys are hashed; expired entries are dropped, and past MAX_STORED_EVENTS
 * the ones expiring soonest go first.
 */
export function isFirstSightingIn(staticData: IDataObject, eventKey: string, windowMs: number, now = Date.now()): boolean {
	const key = createHash('sha256').update(eventKey).digest('base64url').slice(0, 22);
	const stored = (staticData[STORED_EVENTS_FIELD] ?? {}) as Record<string, number>;
	if (typeof stored[key] === 'number' && stored[key] > now) return false;
	const live = Object.entries(stored)
		.filter(([, expiresAt]) => typeof expiresAt === 'number' && expiresAt > now)
		.sort(([, a], [, b]) => b - a)
		.slice(0, MAX_STORED_EVENTS - 1);
	// A new object, so n8n's change tracking sees the write and saves the static data.
	staticData[STORED_EVENTS_FIELD] = Object.fromEntries([...live, [key, now + windowMs]]);
	return true;
}

/**
 * What tells two delivery reports with the same task ID and status apart: their phone number and
 * send time, as the gateway pushes them again unchanged. Two accounts may get the same task ID, and
 * one account's report must not pass for a repeat of the other's. Hashed: no number kept in memory.
 */
export function reportIdentity(sms: { phone?: unknown; sendDate?: unknown }): string {
	return createHash('sha256').update(JSON.stringify([String(sms.phone ?? ''), String(sms.sendDate ?? '')])).digest('base64url').slice(0, 22);
}

/** Both layers: this process first (cheap, catches in-flight repeats), then the shared static data. */
export function isFirstStart(staticData: IDataObject, eventKey: string, windowMs: number, now = Date.now()): boolean {
	if (!isFirstSighting(eventKey, windowMs, now)) return false;
	return isFirstSightingIn(staticData, eventKey, windowMs, now);
}
