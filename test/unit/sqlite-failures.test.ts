/**
 * How the SQLite store names a failure (nodes/shared/store/sqliteFailures.ts): which failures are
 * another process's lock (waited for), and the fix each message gives.
 */
import { StoreUnavailable } from '../../nodes/shared/store/durableStore';
import { isBusy, sqliteFix, sqliteUnavailable } from '../../nodes/shared/store/sqliteFailures';

const LOCK_FIX = /^another process held the file's write lock for more than 2\.5 s; run again/;
const DAMAGED_FIX = /^the file is damaged or is not this store's: stop n8n, move the file \(and its -wal and -shm files\) away/;
const FOLDER_FIX = /^check that n8n may write to that folder and that it is on a local disk, or set DATA_GATEWAY_STORE_FILE/;

describe('isBusy: another connection holds the lock', () => {
	it.each([
		['SQLITE_BUSY', { errcode: 5 }],
		['SQLITE_LOCKED', { errcode: 6 }],
		['SQLITE_BUSY_SNAPSHOT (an extended code)', { errcode: 517 }],
		['SQLITE_LOCKED_SHAREDCACHE (an extended code)', { errcode: 262 }],
		['no code, "database is locked"', { message: 'database is locked' }],
		['no code, "database table is locked", in capitals', { message: 'Database Table Is LOCKED' }],
	])('%s is busy', (_name, error) => {
		expect(isBusy(error)).toBe(true);
	});

	it.each([
		['SQLITE_ERROR', { errcode: 1 }],
		['SQLITE_CORRUPT', { errcode: 11 }],
		['SQLITE_IOERR_LOCK (its primary code is 10, not 5)', { errcode: 3850 }],
		['a code that is not busy, whatever the message says', { errcode: 1, message: 'database is locked' }],
		['no code, another message', { message: 'disk I/O error' }],
		['a message that is not text', { message: 5 }],
		['a bare string', 'database is locked'],
		['null', null],
		['undefined', undefined],
	])('%s is not', (_name, error) => {
		expect(isBusy(error)).toBe(false);
	});
});

describe('sqliteFix: what to do, by the result code, else by the message', () => {
	it.each([
		[5, 'x'],
		[6, 'x'],
		[517, 'x'],
		[undefined, 'database is locked'],
		[undefined, 'Busy'],
		[5, 'database disk image is malformed'],
	])('code %s, "%s": the lock, with the busy timeout in seconds', (code, detail) => {
		expect(sqliteFix(code, detail, 2500)).toMatch(LOCK_FIX);
	});

	it.each([
		[11, 'x'],
		[26, 'x'],
		[779, 'x'],
		[undefined, 'database disk image is malformed'],
		[1, 'file is NOT A DATABASE'],
	])('code %s, "%s": a damaged file', (code, detail) => {
		expect(sqliteFix(code, detail, 2500)).toMatch(DAMAGED_FIX);
	});

	it.each([
		[14, 'unable to open database file'],
		[undefined, "ENOTDIR: not a directory, mkdir '/x'"],
		['ERR_SQLITE_ERROR', 'x'],
		[1, 'x'],
	])('code %s, "%s": the folder', (code, detail) => {
		expect(sqliteFix(code, detail, 2500)).toMatch(FOLDER_FIX);
	});
});

describe('sqliteUnavailable: the error a call gets', () => {
	const label = 'the SQLite file /data/store.sqlite';

	it('names the file, what was being done, what SQLite said and the fix, with the error as its cause; it wrote nothing', () => {
		const cause = Object.assign(new Error('database is locked'), { errcode: 5, code: 'ERR_SQLITE_ERROR' });
		const failure = sqliteUnavailable(label, 'writing', cause, 2500);
		expect(failure).toBeInstanceOf(StoreUnavailable);
		expect(failure.store).toBe(label);
		expect(failure.message).toBe(
			"the SQLite file /data/store.sqlite could not be used (writing: database is locked); another process held the file's write lock for more than 2.5 s; run again, and if it persists look for a process stuck on the file",
		);
		expect(failure.cause).toBe(cause);
		expect(failure.maybeWritten).toBe(false);
	});

	it("keeps the first 200 characters of SQLite's message", () => {
		const failure = sqliteUnavailable(label, 'reading', new Error(`${'a'.repeat(200)}${'Z'.repeat(100)}`), 2500);
		expect(failure.message).toContain(`(reading: ${'a'.repeat(200)}); `);
		expect(failure.message).not.toContain('Z');
	});

	it('reads the result code from errcode, else from code', () => {
		expect(sqliteUnavailable(label, 'opening', { message: 'x', code: 26 }, 2500).message).toMatch(/\(opening: x\); the file is damaged/);
		expect(sqliteUnavailable(label, 'opening', { message: 'x', errcode: 14, code: 26 }, 2500).message).toMatch(/\(opening: x\); check that n8n may write/);
	});

	it('says what a failure without a text message is', () => {
		expect(sqliteUnavailable(label, 'sweeping', 'disk full', 2500).message).toMatch(/\(sweeping: disk full\); check that n8n/);
		expect(sqliteUnavailable(label, 'erasing', { message: 42 }, 2500).message).toMatch(/\(erasing: \[object Object\]\); check that n8n/);
		expect(sqliteUnavailable(label, 'opening', null, 2500).message).toMatch(/\(opening: null\); check that n8n/);
	});
});
