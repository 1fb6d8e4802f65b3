const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 10_000;
/** A Retry-After longer than this fails the item instead of stalling the execution. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** The least time left for which a retry is still made. */
export const MIN_ATTEMPT_MS = 500;

export function parseRetryAfter(header: string | string[] | undefined): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (!value) return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

export function backoffDelay(attempt: number): number {
	// Full jitter keeps parallel items from retrying in lockstep.
	const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
	return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}
