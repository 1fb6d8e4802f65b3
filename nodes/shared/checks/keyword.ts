import type { CheckResult } from './phone';

/** A search keyword: trimmed, and not empty. */
export function checkKeyword(input: string): CheckResult {
	const keyword = String(input ?? '').trim();
	return keyword === '' ? { ok: false, value: 'is empty' } : { ok: true, value: keyword };
}
