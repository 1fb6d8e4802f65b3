/**
 * The half-life of what a 429 taught: after LEARNED_RATE_HOLD_MS without another 429, the spacing
 * the learned rate puts between calls halves (the rate doubles) every minute, by the clock, busy or
 * idle. The hold keeps a busy run at a cap from climbing back to it within seconds (each 429 pauses
 * every call for its Retry-After; bench section 2); idle for ten minutes, the rate is about a
 * thousand times higher, in effect forgotten. Computed when the rate is read: no timer.
 */
export const LEARNED_RATE_HALF_LIFE_MS = 60_000;
/** How long a learned rate holds before it starts to decay. */
export const LEARNED_RATE_HOLD_MS = 5_000;

/** A rate learned from a 429, `elapsedMs` after it: held, then doubled every half-life. */
export function decayedRate(learned: number, elapsedMs: number): number {
	return learned * 2 ** (Math.max(0, elapsedMs - LEARNED_RATE_HOLD_MS) / LEARNED_RATE_HALF_LIFE_MS);
}
