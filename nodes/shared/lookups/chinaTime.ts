/** China time (UTC+8, no daylight saving): the gateway's day and the zone every date in an item is given in. */
const CHINA_OFFSET_MS = 8 * 3_600_000;

/** `2026-11-24T09:30:00+08:00` for an instant in ms. */
export function chinaIso(ms: number): string {
	return `${new Date(ms + CHINA_OFFSET_MS).toISOString().slice(0, 19)}+08:00`;
}

/** The China calendar day of an instant, `2026-11-24`. */
export function chinaDay(ms: number): string {
	return new Date(ms + CHINA_OFFSET_MS).toISOString().slice(0, 10);
}

/** The next 00:00 China time after an instant, in ms. */
export function nextChinaMidnight(ms: number): number {
	const day = new Date(ms + CHINA_OFFSET_MS);
	return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1) - CHINA_OFFSET_MS;
}
