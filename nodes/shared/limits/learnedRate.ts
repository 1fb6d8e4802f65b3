/**
 * The half-life of what a 429 taught: the spacing the learned rate puts between calls halves (the
 * rate doubles) every minute after the 429, by the clock, busy or idle. Busy at the gateway's cap,
 * the rate is back at it within seconds and the next 429 lowers it again; idle for ten minutes, the
 * rate is a thousand times higher, in effect forgotten. Computed when the rate is read: no timer.
 */
export const LEARNED_RATE_HALF_LIFE_MS = 60_000;

/** A rate learned from a 429, `elapsedMs` after it: doubled every half-life. */
export function decayedRate(learned: number, elapsedMs: number): number {
	return learned * 2 ** (Math.max(0, elapsedMs) / LEARNED_RATE_HALF_LIFE_MS);
}
