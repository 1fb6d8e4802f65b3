/**
 * The SQLite store's connection (nodes/shared/store/sqliteStore.ts): opened once with its pragmas,
 * kept across calls and failures that leave it usable, closed when it is not, and every failure
 * a StoreUnavailable saying what was being done. node:sqlite is watched through a thin wrapper
 * that counts opens and closes and can make one statement fail as SQLite would.
 */
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { nodeSqlite, type SqliteDatabase, type SqliteModule, type SqliteStatement } from '../../nodes/shared/store/hostEnvironment';
import { KEY_CHECK_NAME, storedRowKey } from '../../nodes/shared/store/keyName';
import { SqliteDurableStore, sqliteTimeouts } from '../../nodes/shared/store/sqliteStore';
import { sweepTimes } from '../../nodes/shared/store/sqliteSweep';
import { unavailable } from './contract';

jest.setTimeout(60_000);

type Call = 'exec' | 'get' | 'run';
/** What the wrapped SQLite does: its connections, its closes, and a fault for a statement. */
interface Watched {
	module: SqliteModule;
	connections: SqliteDatabase[];
	closes: number;
	execs: string[];
	/** An error to throw instead of running `sql` (undefined: run it). */
	fault?: (sql: string, call: Call, connection: SqliteDatabase) => Error | undefined;
	/** A module without `isTransaction` (node:sqlite before Node 22.16). */
	withoutIsTransaction?: boolean;
}

function sqliteError(message: string, errcode: number): Error {
	return Object.assign(new Error(message), { errcode, code: 'ERR_SQLITE_ERROR' });
}

function watch(real: SqliteModule): Watched {
	const watched: Watched = { module: undefined as unknown as SqliteModule, connections: [], closes: 0, execs: [] };
	const check = (sql: string, call: Call, connection: SqliteDatabase) => {
		const error = watched.fault?.(sql, call, connection);
		if (error) throw error;
	};
	class DatabaseSync {
		private readonly real: SqliteDatabase;
		constructor(path: string) {
			this.real = new real.DatabaseSync(path);
			watched.connections.push(this.real);
		}
		exec(sql: string) {
			watched.execs.push(sql);
			check(sql, 'exec', this.real);
			this.real.exec(sql);
		}
		prepare(sql: string): SqliteStatement {
			const statement = this.real.prepare(sql);
			return {
				get: (...parameters) => (check(sql, 'get', this.real), statement.get(...parameters)),
				run: (...parameters) => (check(sql, 'run', this.real), statement.run(...parameters)),
			};
		}
		close() {
			watched.closes++;
			this.real.close();
		}
		get isTransaction() {
			return watched.withoutIsTransaction ? undefined : this.real.isTransaction;
		}
	}
	watched.module = { DatabaseSync } as unknown as SqliteModule;
	return watched;
}

let folder: string;
let real: SqliteModule;
const stores: SqliteDurableStore[] = [];
const timeouts = { ...sqliteTimeouts };
const sweepDefaults = { ...sweepTimes };
let fileCount = 0;

function opened(watched: Watched, clock?: () => number, file = join(folder, `file-${++fileCount}.sqlite`)) {
	const store = new SqliteDurableStore(watched.module, file, clock);
	stores.push(store);
	return store;
}
const put = async (store: SqliteDurableStore, key: string, value: string, extra: { ttlMs?: number; phone?: string } = {}) =>
	await store.update([key], () => ({ writes: [{ key, value, ...extra }], result: undefined }));

/** A store on a watched node:sqlite holding key 'a' = '1'. */
async function withRowA(extra: { phone?: string } = {}) {
	const watched = watch(real);
	const store = opened(watched);
	await put(store, 'a', '1', extra);
	return { watched, store };
}

beforeAll(() => {
	const loaded = nodeSqlite();
	if (!loaded) throw new Error('These tests need node:sqlite (Node 24): run them with npm test');
	real = loaded;
	folder = mkdtempSync(join(tmpdir(), 'dgw-sqlite-connection-'));
});
afterEach(() => {
	Object.assign(sqliteTimeouts, timeouts);
	Object.assign(sweepTimes, sweepDefaults);
});
afterAll(() => {
	stores.forEach((store) => store.close());
	rmSync(folder, { recursive: true, force: true });
});

describe('the connection', () => {
	it("is opened once with the store's pragmas, and kept by every later call", async () => {
		const { watched, store } = await withRowA();
		expect(await store.read(['a'])).toEqual(['1']);
		await put(store, 'a', '2');
		expect(watched.connections).toHaveLength(1);
		expect(watched.closes).toBe(0);
		const connection = watched.connections[0];
		const pragma = (name: string) => Object.values(connection.prepare(`PRAGMA ${name}`).get() ?? {})[0];
		expect(pragma('busy_timeout')).toBe(15);
		expect(pragma('journal_mode')).toBe('wal');
		// NORMAL is 1, FULL 2: with WAL, NORMAL loses nothing when a process dies.
		expect(pragma('synchronous')).toBe(1);
		expect(pragma('secure_delete')).toBe(1);
		expect(pragma('auto_vacuum')).toBe(2);
	});

	it('waits for the lock in one go no longer than the busy timeout when that is shorter', async () => {
		sqliteTimeouts.busyMs = 5;
		const watched = watch(real);
		await opened(watched).read(['a']);
		expect(Object.values(watched.connections[0].prepare('PRAGMA busy_timeout').get() ?? {})[0]).toBe(5);
	});

	it('is closed by close(), which may be called again, and the next call opens the file anew', async () => {
		const { watched, store } = await withRowA();
		store.close();
		store.close();
		expect(watched.closes).toBe(1);
		expect(await store.read(['a'])).toEqual(['1']);
		expect(watched.connections).toHaveLength(2);
	});

	it('is kept after commits and a refused decision on a node:sqlite without isTransaction', async () => {
		const watched = watch(real);
		watched.withoutIsTransaction = true;
		const store = opened(watched);
		await put(store, 'a', '1');
		await expect(store.update(['a'], () => { throw new Error('refused'); })).rejects.toThrow('refused');
		await put(store, 'a', '2');
		expect(await store.erasePhone('13800138000')).toBe(0);
		expect(await store.read(['a'])).toEqual(['2']);
		expect(watched.connections).toHaveLength(1);
		expect(watched.closes).toBe(0);
	});

	it('is kept when a failed write left no transaction to roll back (SQLite ended it)', async () => {
		const { watched, store } = await withRowA();
		watched.fault = (sql, call, connection) => {
			if (call !== 'run' || !sql.startsWith('UPDATE store_entries') ) return undefined;
			connection.exec('ROLLBACK');
			return sqliteError('database or disk is full', 13);
		};
		const failure = await unavailable(put(store, 'a', '2'));
		expect(failure.message).toMatch(/could not be used \(writing: database or disk is full\)/);
		watched.fault = undefined;
		expect(watched.execs).not.toContain('ROLLBACK');
		expect(await store.read(['a'])).toEqual(['1']);
		expect(watched.closes).toBe(0);
	});

	it('is closed when even the rollback fails, and the next call opens the file anew', async () => {
		const { watched, store } = await withRowA();
		watched.fault = (sql) => (sql === 'ROLLBACK' ? sqliteError('disk I/O error', 10) : undefined);
		await expect(store.update(['a'], () => { throw new Error('refused'); })).rejects.toThrow('refused');
		expect(watched.closes).toBe(1);
		watched.fault = undefined;
		expect(await store.read(['a'])).toEqual(['1']);
		expect(watched.connections).toHaveLength(2);
	});

	it('is closed when the file was first used with another key, and every call says which key to give', async () => {
		const watched = watch(real);
		const file = join(folder, 'other-key.sqlite');
		await put(opened(watched, undefined, file), 'a', '1');
		const other = new real.DatabaseSync(file);
		other.prepare('UPDATE store_entries SET value = ? WHERE key = ?').run('another key', KEY_CHECK_NAME);
		other.close();
		const again = watch(real);
		const store = opened(again, undefined, file);
		for (const call of [async () => await store.read(['a']), async () => await put(store, 'a', '2')]) {
			const failure = await unavailable(call());
			expect(failure.message).toMatch(/used by n8n processes with another encryption key than this one's .*N8N_ENCRYPTION_KEY/);
		}
		expect(again.connections).toHaveLength(2);
		expect(again.closes).toBe(2);
	});
});

describe('a failure says what was being done', () => {
	const ioError = () => sqliteError('disk I/O error', 10);

	it('reading, and the read transaction is ended', async () => {
		const { watched, store } = await withRowA();
		watched.fault = (sql, call) => (call === 'get' && sql.startsWith('SELECT id, value') ? ioError() : undefined);
		expect((await unavailable(store.read(['a']))).message).toMatch(/could not be used \(reading: disk I\/O error\); check that n8n may write/);
		watched.fault = undefined;
		expect(await store.read(['a'])).toEqual(['1']);
		expect(watched.connections).toHaveLength(1);
	});

	it('sweeping', async () => {
		const { watched, store } = await withRowA();
		await store.sweepNow();
		watched.fault = (sql) => (sql.includes('AS newest') ? ioError() : undefined);
		expect((await unavailable(store.sweepNow())).message).toMatch(/\(sweeping: disk I\/O error\)/);
	});

	it('erasing', async () => {
		const { watched, store } = await withRowA({ phone: '13800138000' });
		watched.fault = (sql) => (sql.includes('WHERE phone_tag = ?') ? ioError() : undefined);
		expect((await unavailable(store.erasePhone('13800138000'))).message).toMatch(/\(erasing: disk I\/O error\)/);
		watched.fault = undefined;
		expect(await store.erasePhone('13800138000')).toBe(1);
	});

	it('giving free pages back', async () => {
		let now = 1_800_000_000_000;
		const watched = watch(real);
		const store = opened(watched, () => now);
		await put(store, 'a', 'x'.repeat(5_000), { ttlMs: 1_000 });
		await store.sweepNow();
		now += 60_000;
		watched.fault = (sql) => (sql.startsWith('PRAGMA incremental_vacuum') ? ioError() : undefined);
		expect((await unavailable(store.sweepNow())).message).toMatch(/\(giving free pages back: disk I\/O error\)/);
	});
});

describe('after a sweep', () => {
	const vacuums = (watched: Watched) => watched.execs.filter((sql) => sql.startsWith('PRAGMA incremental_vacuum')).length;

	async function sweptFile(watched: Watched, rows: number, bytes: number) {
		let now = 1_800_000_000_000;
		const store = opened(watched, () => now);
		const keys = Array.from({ length: rows }, (_, index) => `row ${index}`);
		for (let at = 0; at < keys.length; at += 500) {
			const chunk = keys.slice(at, at + 500);
			await store.update(chunk, () => ({ writes: chunk.map((key) => ({ key, value: 'x'.repeat(bytes), ttlMs: 1_000 })), result: undefined }));
		}
		await store.sweepNow();
		const before = vacuums(watched);
		now += 60_000;
		const pass = await store.sweepNow();
		return { pass, vacuumSteps: vacuums(watched) - before };
	}

	it('a pass that removed nothing gives no pages back', async () => {
		const { watched, store } = await withRowA();
		await store.sweepNow();
		const before = vacuums(watched);
		expect((await store.sweepNow()).removed).toBe(0);
		expect(vacuums(watched) - before).toBe(0);
	});

	it('gives the free pages back in steps of 64 pages, stopping once none are left', async () => {
		const { pass, vacuumSteps } = await sweptFile(watch(real), 20, 100);
		expect(pass.removed).toBe(20);
		expect(vacuumSteps).toBe(1);
	});

	it('gives back at most 16 steps of pages a pass (a larger rest is the next pass\'s)', async () => {
		const { pass, vacuumSteps } = await sweptFile(watch(real), 3_000, 2_000);
		expect(pass.removed).toBe(3_000);
		expect(vacuumSteps).toBe(16);
	});

	it('gives nothing back from a file made before auto_vacuum: its free pages are reused', async () => {
		const file = join(folder, 'before-auto-vacuum.sqlite');
		const made = new real.DatabaseSync(file);
		made.exec('CREATE TABLE earlier (a)');
		made.close();
		let now = 1_800_000_000_000;
		const watched = watch(real);
		const store = opened(watched, () => now, file);
		await put(store, 'a', 'x'.repeat(50_000), { ttlMs: 1_000 });
		await store.sweepNow();
		now += 60_000;
		expect((await store.sweepNow()).removed).toBe(1);
		expect(vacuums(watched)).toBe(0);
	});
});

describe("a sweep step's figures", () => {
	it('a step after the last row stays where the one before stopped', async () => {
		Object.assign(sweepTimes, { rowsPerStep: 4, lookPerStep: 10 });
		let now = 1_800_000_000_000;
		const store = opened(watch(real), () => now);
		// The key check is row 1; rows 2 to 5 expire: the first step removes its 4th expired row, the file's last.
		const keys = ['a', 'b', 'c', 'd'];
		await store.update(keys, () => ({ writes: keys.map((key) => ({ key, value: 'x', ttlMs: 1_000 })), result: undefined }));
		await store.sweepNow();
		now += 60_000;
		const pass = await store.sweepNow();
		expect(pass.steps.map(({ looked, removed, last, newest }) => ({ looked, removed, last, newest }))).toEqual([
			{ looked: 5, removed: 4, last: 5, newest: 5 },
			// Rows 2 to 5 are gone: the newest is the key check's.
			{ looked: 0, removed: 0, last: 5, newest: 1 },
		]);
	});

	it('say where each step stopped, the newest row, and how long it held the thread', async () => {
		Object.assign(sweepTimes, { rowsPerStep: 4, lookPerStep: 10 });
		let now = 1_800_000_000_000;
		const store = opened(watch(real), () => now);
		// The key check is row 1; then 12 rows, every other one expiring.
		const keys = Array.from({ length: 12 }, (_, index) => `row ${index}`);
		await store.update(keys, () => ({ writes: keys.map((key, index) => ({ key, value: 'x', ttlMs: index % 2 === 0 ? 1_000 : undefined })), result: undefined }));
		await store.sweepNow();
		now += 60_000;
		const started = performance.now();
		const pass = await store.sweepNow();
		const took = performance.now() - started;
		expect(pass.steps.map(({ looked, removed, last, newest }) => ({ looked, removed, last, newest }))).toEqual([
			// Rows 2, 4, 6 and 8 expired: the step stops after row 8, the 4th.
			{ looked: 8, removed: 4, last: 8, newest: 13 },
			{ looked: 5, removed: 2, last: 13, newest: 13 },
		]);
		for (const step of pass.steps) expect(step.ms).toBeGreaterThanOrEqual(0);
		for (const step of pass.steps) expect(step.ms).toBeLessThanOrEqual(took);
	});
});

describe('rows as a read finds them', () => {
	it('a row is read up to its expiry, and is gone at it', async () => {
		let now = 1_800_000_000_000;
		const store = opened(watch(real), () => now);
		await put(store, 'a', '1', { ttlMs: 1_000 });
		now += 999;
		expect(await store.read(['a'])).toEqual(['1']);
		now += 1;
		expect(await store.read(['a'])).toEqual([undefined]);
	});

	it('a row whose expiry is not a time is gone; one whose value is not text is refused, naming the read', async () => {
		const file = join(folder, 'odd-rows.sqlite');
		const store = opened(watch(real), undefined, file);
		await put(store, 'first', '1');
		const other = new real.DatabaseSync(file);
		other.prepare('INSERT INTO store_entries (key, value, expires_at) VALUES (?, ?, ?)').run(storedRowKey('odd expiry'), 'x', 'soon');
		other.exec(`INSERT INTO store_entries (key, value, expires_at) VALUES ('${storedRowKey('odd value')}', X'00', NULL)`);
		other.close();
		expect(await store.read(['odd expiry', 'first'])).toEqual([undefined, '1']);
		expect((await unavailable(store.read(['odd value']))).message).toMatch(/\(reading: a row whose value is not text\)/);
	});
});

describe('opening a file', () => {
	it("adds the phone tag to a table of an earlier version that had none: its rows are read, and a number's rows are erased", async () => {
		const file = join(folder, 'without-phone-tag.sqlite');
		const made = new real.DatabaseSync(file);
		made.exec('CREATE TABLE store_entries (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, value TEXT NOT NULL, expires_at INTEGER)');
		made.prepare('INSERT INTO store_entries (key, value, expires_at) VALUES (?, ?, NULL)').run(storedRowKey('earlier'), 'kept');
		made.close();
		const store = opened(watch(real), undefined, file);
		expect(await store.read(['earlier'])).toEqual(['kept']);
		await put(store, 'new', 'n', { phone: '13800138000' });
		expect(await store.erasePhone('13800138000')).toBe(1);
		expect(await store.read(['earlier', 'new'])).toEqual(['kept', undefined]);
	});

	it.each([
		['making the table', 'exec', 'CREATE INDEX IF NOT EXISTS store_entries_phone'],
		["writing the file's key check", 'run', 'INSERT INTO store_entries (key, value, expires_at) VALUES (?, ?, NULL)'],
	])('a failure while %s is rolled back, the file closed, and the failure named', async (_what, call, statement) => {
		const watched = watch(real);
		watched.fault = (sql, made) => (made === call && sql.startsWith(statement) ? sqliteError('disk I/O error', 10) : undefined);
		const store = opened(watched);
		expect((await unavailable(store.read(['a']))).message).toMatch(/could not be used \(opening: disk I\/O error\)/);
		expect(watched.execs.at(-1)).toBe('ROLLBACK');
		expect(watched.closes).toBe(1);
		watched.fault = undefined;
		expect(await store.read(['a'])).toEqual([undefined]);
	});

	it.each([
		['making the table', 'exec', 'CREATE INDEX IF NOT EXISTS store_entries_phone'],
		["writing the file's key check", 'run', 'INSERT INTO store_entries (key, value, expires_at) VALUES (?, ?, NULL)'],
	])('a failure while %s that ended the transaction itself is named as it is (no rollback to fail)', async (_what, call, statement) => {
		const watched = watch(real);
		watched.fault = (sql, made, connection) => {
			if (made !== call || !sql.startsWith(statement)) return undefined;
			connection.exec('ROLLBACK');
			return sqliteError('database or disk is full', 13);
		};
		const store = opened(watched);
		expect((await unavailable(store.read(['a']))).message).toMatch(/could not be used \(opening: database or disk is full\)/);
		expect(watched.execs).not.toContain('ROLLBACK');
	});
});

describe("the file's modes", () => {
	it('narrows the -wal and -shm files another process left readable (644) to 600 when it opens the file', async () => {
		const file = join(folder, 'shared-modes.sqlite');
		const other = new real.DatabaseSync(file);
		other.exec('PRAGMA journal_mode = WAL');
		other.exec('CREATE TABLE earlier (a)');
		other.exec("INSERT INTO earlier VALUES ('x')");
		const paths = [file, `${file}-wal`, `${file}-shm`];
		for (const path of paths) chmodSync(path, 0o644);
		try {
			expect(await opened(watch(real), undefined, file).read(['a'])).toEqual([undefined]);
			expect(paths.map((path) => statSync(path).mode & 0o777)).toEqual([0o600, 0o600, 0o600]);
		} finally {
			other.close();
		}
	});
});
