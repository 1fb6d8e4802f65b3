import { sleep } from 'n8n-workflow';

import { StoreUnavailable, type DurableStore, type StoreDecision } from './durableStore';
import { mayWorkNow, nextTurn } from './eventLoopShare';
import { hostClock } from './hostClock';
import { makeFolderFor, STORE_FILE_VARIABLE, type SqliteDatabase, type SqliteModule, type SqliteStatement } from './hostEnvironment';
import { checkWrittenKeys, lifetimeMs, storedRowKey } from './keyName';
import { WalCheckpoints } from './sqliteCheckpoints';

export const sqliteTimeouts = {
	/** How long a call waits in all for another process's write to finish; tests lower it. */
	busyMs: 5_000,
	/** One synchronous wait for the lock (it blocks this process's event loop), between pauses. */
	lockWaitMs: 15,
};

/** Rows the sweep looks at per update at most (the next ones in key order), so that no call does a long sweep. */
const SWEEP_CHUNK = 64;
/** Between two passes of the sweep over the whole file, in ms. */
const SWEEP_PAUSE_MS = 30_000;

/**
 * One row per key, in the order the rows were made, and an index on the key. The row's place
 * follows when it was written, so the records of one batch share pages and a later update of them
 * (a claim, a mark sent) writes few pages, where a table ordered by the hashed key wrote one page
 * per key: half the SQLite time per send at 20,000 sends (bench section 9). Files of earlier
 * versions kept a table `entries` ordered by key (and an index on the expiry): its rows move here
 * once, in one transaction, whichever process opens the file first.
 */
function createTable(database: SqliteDatabase) {
	database.exec('BEGIN IMMEDIATE');
	let committed = false;
	try {
		database.exec('CREATE TABLE IF NOT EXISTS store_entries (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, value TEXT NOT NULL, expires_at INTEGER)');
		if (database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'").get()) {
			database.exec('INSERT OR IGNORE INTO store_entries (key, value, expires_at) SELECT key, value, expires_at FROM entries; DROP TABLE entries;');
		}
		database.exec('COMMIT');
		committed = true;
	} finally {
		if (!committed && database.isTransaction !== false) database.exec('ROLLBACK');
	}
}

interface Statements {
	select: SqliteStatement;
	upsert: SqliteStatement;
	remove: SqliteStatement;
	sweepChunk: SqliteStatement;
	sweep: SqliteStatement;
}

/**
 * An SQLite file on this host (Node's built-in `node:sqlite`): no server, survives restarts, and
 * atomic across the processes of one host. `update` runs inside BEGIN IMMEDIATE … COMMIT, which
 * takes the file's write lock before reading, so another process cannot change the keys between
 * the read and the write. The work is synchronous and short (one indexed row per key); waiting for
 * another process's lock is not (see `use`). Its clock is this host's, shared by every process
 * that shares the file.
 */
export class SqliteDurableStore implements DurableStore {
	readonly kind = 'sqlite' as const;
	readonly label: string;
	private database?: SqliteDatabase;
	private statements?: Statements;
	private readonly checkpoints: WalCheckpoints;
	private nextSweepAt = 0;
	/** The last row the sweep looked at in its current pass (0 before the first). */
	private sweptTo = 0;

	constructor(
		private readonly sqlite: SqliteModule,
		readonly file: string,
		private readonly clock: () => number = () => hostClock.now(),
	) {
		this.label = `the SQLite file ${file}`;
		this.checkpoints = new WalCheckpoints(file);
	}

	async now(): Promise<number> {
		return this.clock();
	}

	async read(keys: readonly string[]): Promise<Array<string | undefined>> {
		const now = this.clock();
		return await this.use('reading', (database, statements) => {
			// One read transaction: every key from the same moment.
			database.exec('BEGIN');
			try {
				return keys.map((key) => this.valueOf(statements, key, now));
			} finally {
				database.exec('COMMIT');
			}
		});
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>): Promise<T> {
		const outcome = await this.use('writing', (database, statements): { result: T } | { decideFailed: unknown } => {
			database.exec('BEGIN IMMEDIATE');
			let committed = false;
			try {
				const now = this.clock();
				const values = keys.map((key) => this.valueOf(statements, key, now));
				let decision: StoreDecision<T>;
				try {
					decision = decide(values, now);
					checkWrittenKeys(keys, decision.writes);
				} catch (decideFailed) {
					// The caller's own error: passed on as it is, nothing written.
					return { decideFailed };
				}
				for (const write of decision.writes) {
					const name = storedRowKey(write.key);
					if (write.value === null) statements.remove.run(name);
					else {
						const ttl = lifetimeMs(write.ttlMs);
						statements.upsert.run(name, write.value, ttl === undefined ? null : now + ttl);
					}
				}
				this.sweep(statements, now);
				database.exec('COMMIT');
				committed = true;
				this.checkpoints.committed();
				return { result: decision.result };
			} finally {
				if (!committed) this.rollBack(database);
			}
		});
		if ('decideFailed' in outcome) throw outcome.decideFailed;
		return outcome.result;
	}

	/** Undoes the open transaction; a file that cannot even do that is closed and opened anew by the next call. */
	private rollBack(database: SqliteDatabase) {
		if (database.isTransaction === false) return;
		try {
			database.exec('ROLLBACK');
		} catch {
			this.close();
		}
	}

	/** Closes the file (tests; a later call opens it again). */
	close(): void {
		this.checkpoints.closed();
		try {
			this.database?.close();
		} catch {
			// Already closed: nothing to release.
		}
		this.database = undefined;
		this.statements = undefined;
	}

	private valueOf(statements: Statements, key: string, now: number): string | undefined {
		const row = statements.select.get(storedRowKey(key));
		if (!row) return undefined;
		const expiresAt = row.expires_at;
		if (expiresAt !== null && (typeof expiresAt !== 'number' || expiresAt <= now)) return undefined;
		if (typeof row.value !== 'string') throw new Error('a row whose value is not text');
		return row.value;
	}

	/**
	 * Removes the expired rows among the next chunk of rows in the order they were made; reads already
	 * skip them, so this only keeps the file small. Walking by row needs no index on the expiry, which
	 * every write would have to update too (a quarter of the send records' SQLite time).
	 */
	private sweep(statements: Statements, now: number) {
		if (now < this.nextSweepAt) return;
		const chunk = statements.sweepChunk.get(this.sweptTo, SWEEP_CHUNK) as { rows?: unknown; last?: unknown } | undefined;
		statements.sweep.run(this.sweptTo, SWEEP_CHUNK, now);
		if (Number(chunk?.rows) >= SWEEP_CHUNK && typeof chunk?.last === 'number') {
			this.sweptTo = chunk.last;
			return;
		}
		// The pass reached the end of the file: the next one starts from the beginning, later.
		this.sweptTo = 0;
		this.nextSweepAt = now + SWEEP_PAUSE_MS;
	}

	/**
	 * Runs `work` on the open file. While another process holds the write lock, it waits for it in
	 * short synchronous waits (the lock wait) with pauses between them, so that n8n's other work goes
	 * on, up to the busy timeout. Any other SQLite failure is a StoreUnavailable naming the file and the fix.
	 */
	private async use<T>(what: string, work: (database: SqliteDatabase, statements: Statements) => T): Promise<T> {
		const started = Date.now();
		for (;;) {
			while (!mayWorkNow()) await nextTurn();
			const attempt = this.attempt(what, work);
			if ('value' in attempt) return attempt.value;
			if (!attempt.busy || Date.now() - started >= sqliteTimeouts.busyMs) throw attempt.failure;
			await sleep(1 + Math.floor(Math.random() * 4));
		}
	}

	private attempt<T>(what: string, work: (database: SqliteDatabase, statements: Statements) => T): { value: T } | { failure: StoreUnavailable; busy: boolean } {
		let opened: { database: SqliteDatabase; statements: Statements };
		try {
			opened = this.open();
		} catch (error) {
			this.close();
			return { failure: this.unavailable('opening', error), busy: isBusy(error) };
		}
		try {
			return { value: work(opened.database, opened.statements) };
		} catch (error) {
			return { failure: this.unavailable(what, error), busy: isBusy(error) };
		}
	}

	private open(): { database: SqliteDatabase; statements: Statements } {
		if (this.database && this.statements) return { database: this.database, statements: this.statements };
		makeFolderFor(this.file);
		const database = new this.sqlite.DatabaseSync(this.file);
		let ready = false;
		try {
			database.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(Math.min(sqliteTimeouts.lockWaitMs, sqliteTimeouts.busyMs)))}`);
			database.exec('PRAGMA journal_mode = WAL');
			// With WAL, NORMAL loses nothing when a process dies, only the last commits on a power loss.
			database.exec('PRAGMA synchronous = NORMAL');
			this.checkpoints.opened(database);
			createTable(database);
			const statements: Statements = {
				select: database.prepare('SELECT value, expires_at FROM store_entries WHERE key = ?'),
				upsert: database.prepare(
					'INSERT INTO store_entries (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at',
				),
				remove: database.prepare('DELETE FROM store_entries WHERE key = ?'),
				sweepChunk: database.prepare('SELECT count(*) AS rows, max(id) AS last FROM (SELECT id FROM store_entries WHERE id > ? ORDER BY id LIMIT ?)'),
				sweep: database.prepare('DELETE FROM store_entries WHERE id IN (SELECT id FROM store_entries WHERE id > ? ORDER BY id LIMIT ?) AND expires_at <= ?'),
			};
			this.database = database;
			this.statements = statements;
			ready = true;
			return { database, statements };
		} finally {
			if (!ready) database.close();
		}
	}

	private unavailable(what: string, error: unknown): StoreUnavailable {
		// node:sqlite's errors may come from another realm (a vm, a test runner): read the message, not the class.
		const message = (error as { message?: unknown } | undefined)?.message;
		const detail = typeof message === 'string' ? message : String(error);
		const code = (error as { errcode?: number; code?: string }).errcode ?? (error as { code?: string }).code;
		return new StoreUnavailable(this.label, `${this.label} could not be used (${what}: ${detail.slice(0, 200)}); ${sqliteFix(code, detail)}`, { cause: error });
	}
}

/** SQLITE_BUSY or SQLITE_LOCKED (sqlite.org/rescode.html): another connection holds the lock. */
function isBusy(error: unknown): boolean {
	const { errcode, message } = (error ?? {}) as { errcode?: unknown; message?: unknown };
	if (typeof errcode === 'number') return (errcode & 0xff) === 5 || (errcode & 0xff) === 6;
	return typeof message === 'string' && /database is locked|database table is locked/i.test(message);
}

/** What to do about an SQLite failure, by its result code (sqlite.org/rescode.html). */
function sqliteFix(code: number | string | undefined, detail: string): string {
	if ((typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6)) || /locked|busy/i.test(detail)) {
		return `another process held the file's write lock for more than ${sqliteTimeouts.busyMs / 1000} s; run again, and if it persists look for a process stuck on the file`;
	}
	if (code === 11 || code === 26 || /malformed|not a database/i.test(detail)) {
		return `the file is damaged or is not this store's: stop n8n, move the file (and its -wal and -shm files) away, and n8n starts a new one, without the send records it held`;
	}
	return `check that n8n may write to that folder and that it is on a local disk, or set ${STORE_FILE_VARIABLE} to a file where it can`;
}
