import { createHash } from 'crypto';

/**
 * The name a store keeps a caller's key under: a hash, so phone numbers, task ids or anything
 * else a caller puts in a key never appear in Redis's or the SQLite file's key names.
 */
export function storedKeyName(key: string): string {
	return `dgw:${createHash('sha256').update(key).digest('base64url')}`;
}

/** A write's lifetime in whole ms (what Redis's PX takes), or undefined to keep it until deleted. */
export function lifetimeMs(ttlMs: number | undefined): number | undefined {
	if (ttlMs === undefined || ttlMs === 0) return undefined;
	if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new Error(`A store write's ttlMs must be a positive number of ms, not ${ttlMs}`);
	return Math.max(1, Math.ceil(ttlMs));
}

/** Writes may touch only the keys the update read (the compare-and-set covers only those). */
export function checkWrittenKeys(keys: readonly string[], writes: ReadonlyArray<{ key: string }>): void {
	const read = new Set(keys);
	for (const write of writes) {
		if (!read.has(write.key)) throw new Error(`A store update wrote ${write.key}, which it did not read`);
	}
}
