/** Pure helpers for the "Simplify" output option: they smooth the gateway's oddities (docs/gateway-api.md#answers). */

/** The gateway's time zone is not documented (docs/gateway-api.md#open-points); its samples are China local time. */
export const DEFAULT_GATEWAY_UTC_OFFSET = '+08:00';

const GATEWAY_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2})?))?$/;

/** `2024-03-01 08:30:00` -> `2024-03-01T08:30:00+08:00`; anything else -> null. */
export function gatewayTimeToIso(value: unknown, utcOffset = DEFAULT_GATEWAY_UTC_OFFSET): string | null {
	if (typeof value !== 'string') return null;
	const match = GATEWAY_TIMESTAMP.exec(value.trim());
	if (!match) return null;
	const time = match[2] ?? '00:00:00';
	return `${match[1]}T${time.length === 5 ? `${time}:00` : time}${utcOffset}`;
}

/** Adds `<field>Iso` beside every timestamp field present. */
export function withIsoTimes<T extends Record<string, unknown>>(record: T, fields: readonly string[], utcOffset?: string): T {
	const result: Record<string, unknown> = { ...record };
	for (const field of fields) {
		if (field in record) result[`${field}Iso`] = gatewayTimeToIso(record[field], utcOffset);
	}
	return result as T;
}

/** HTML fragments (as in the telephone `countDesc`) as plain text. */
export function htmlToText(value: unknown): string | null {
	if (typeof value !== 'string') return null;
	let text = value;
	// Passes that cannot change the text are skipped: this runs for every telephone answer.
	if (text.includes('<')) text = text.replace(/<br\s*\/?>/gi, '\n').replace(/<[^>]*>/g, '');
	if (text.includes('&')) {
		text = text
			.replace(/&nbsp;/g, ' ')
			.replace(/&lt;/g, '<')
			.replace(/&gt;/g, '>')
			.replace(/&quot;/g, '"')
			.replace(/&#39;/g, "'")
			.replace(/&amp;/g, '&');
	}
	return text.replace(/[ \t]+/g, ' ').trim();
}

/** The enterprise samples write `-` (and sometimes an empty string) for "no value". */
export function emptyToNull(value: unknown): unknown {
	return value === '-' || value === '' ? null : value;
}

/** A count that may arrive as text; null when it is not a number. */
export function toCount(value: unknown): number | null {
	if (typeof value === 'number') return Number.isFinite(value) ? value : null;
	if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
	return null;
}

/** `iszhapian`: 1 is flagged, 0 is not; any other value (missing, null, 2, text) is unknown, so null. */
export function flagFromIszhapian(value: unknown): boolean | null {
	if (value === 1 || value === '1') return true;
	if (value === 0 || value === '0') return false;
	return null;
}
