/**
 * Events started recently, so a repeated delivery of the same event starts the workflow once.
 * Lives in this n8n process only: queue-mode workers and restarts do not share it.
 */
const expiryByEvent = new Map<string, number>();

/** Bounds memory when callbacks arrive faster than the window lets them expire. */
const MAX_REMEMBERED_EVENTS = 20_000;

/** True the first time `eventKey` is seen within `windowMs`; remembers it from then on. */
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
