/**
 * One copy of each short text that recurs across an execution's answers (a province, a city, a
 * carrier, a report type). JSON.parse gives every answer its own copies, and the execution keeps
 * every answer it paid for, so on a long batch those copies are most of what an answer weighs and
 * all of it outlives V8's young collections (bench section 5).
 */

/** Longer texts rarely recur (phone numbers, addresses, descriptions): not worth a lookup. */
const MAX_LENGTH = 10;
/** Per execution: past it, new texts are left as they are. */
export const MAX_SHARED_STRINGS = 2_000;
/** Nested objects are walked this deep (the telephone's company details sit at depth 1). */
const MAX_DEPTH = 3;

const isPlainObject = (value: object) => Object.getPrototypeOf(value) === Object.prototype;

/**
 * Replaces, in place, the short strings of a freshly parsed answer (plain objects and arrays) with
 * the copies `strings` already holds, adding new ones while there is room. Other values (class
 * instances, such as a misshapen answer) are left alone.
 */
export function shareStrings(value: unknown, strings: Map<string, string>, depth = 0): void {
	if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return;
	if (Array.isArray(value)) {
		for (let index = 0; index < value.length; index++) value[index] = shared(value[index], strings, depth);
		return;
	}
	if (!isPlainObject(value)) return;
	const record = value as Record<string, unknown>;
	for (const key in record) record[key] = shared(record[key], strings, depth);
}

function shared(value: unknown, strings: Map<string, string>, depth: number): unknown {
	if (typeof value !== 'string') {
		shareStrings(value, strings, depth + 1);
		return value;
	}
	if (value.length === 0 || value.length > MAX_LENGTH) return value;
	const known = strings.get(value);
	if (known !== undefined) return known;
	if (strings.size < MAX_SHARED_STRINGS) strings.set(value, value);
	return value;
}
