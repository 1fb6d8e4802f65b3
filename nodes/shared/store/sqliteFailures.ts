import { StoreUnavailable } from './durableStore';
import { STORE_FILE_VARIABLE } from './hostEnvironment';

/** An SQLite result code's primary part (sqlite.org/rescode.html): the low byte of an extended code. */
const primary = (code: number) => code & 0xff;
const BUSY = 5;
const LOCKED = 6;
const CORRUPT = 11;
const NOT_A_DATABASE = 26;

/** SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock, so waiting may help. */
export function isBusy(error: unknown): boolean {
	const { errcode, message } = (error ?? {}) as { errcode?: unknown; message?: unknown };
	if (typeof errcode === 'number') return primary(errcode) === BUSY || primary(errcode) === LOCKED;
	// Stryker disable next-line ConditionalExpression: test() of something not text reads its String(), which no lock message is.
	return typeof message === 'string' && /database is locked|database table is locked/i.test(message);
}

/** What to do about an SQLite failure, by its result code, else by its message. */
export function sqliteFix(code: number | string | undefined, detail: string, busyMs: number): string {
	// Stryker disable next-line ConditionalExpression: `& 0xff` of something not a number is 0, which names no code.
	if ((typeof code === 'number' && (primary(code) === BUSY || primary(code) === LOCKED)) || /locked|busy/i.test(detail)) {
		return `another process held the file's write lock for more than ${busyMs / 1000} s; run again, and if it persists look for a process stuck on the file`;
	}
	// Stryker disable next-line ConditionalExpression: `& 0xff` of something not a number is 0, which names no code.
	if ((typeof code === 'number' && (primary(code) === CORRUPT || primary(code) === NOT_A_DATABASE)) || /malformed|not a database/i.test(detail)) {
		return `the file is damaged or is not this store's: stop n8n, move the file (and its -wal and -shm files) away, and n8n starts a new one, without the send records it held`;
	}
	return `check that n8n may write to that folder and that it is on a local disk, or set ${STORE_FILE_VARIABLE} to a file where it can`;
}

/**
 * The StoreUnavailable for a failure while `what` (opening, reading, writing…): the file, what
 * SQLite said (its first 200 characters) and the fix. node:sqlite's errors may come from another
 * realm (a vm, a test runner): their message is read, not their class.
 */
export function sqliteUnavailable(label: string, what: string, error: unknown, busyMs: number): StoreUnavailable {
	const message = (error as { message?: unknown } | null | undefined)?.message;
	const detail = typeof message === 'string' ? message : String(error);
	const { errcode, code } = (error ?? {}) as { errcode?: number; code?: string };
	return new StoreUnavailable(label, `${label} could not be used (${what}: ${detail.slice(0, 200)}); ${sqliteFix(errcode ?? code, detail, busyMs)}`, { cause: error });
}
