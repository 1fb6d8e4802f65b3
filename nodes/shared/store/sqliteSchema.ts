import type { SqliteDatabase, SqliteStatement } from './hostEnvironment';
import { KEY_CHECK_NAME, keyCheck, NAME_PREFIX } from './keyName';

/** Rows named as earlier versions named them (keyName.ts legacyRowKey): every name before this version's prefix. */
const LEGACY_NAMES = `key >= 'dgw:' AND key < '${NAME_PREFIX}'`;

/**
 * One row per key, in the order the rows were made, and an index on the key. The row's place
 * follows when it was written, so the records of one batch share pages and a later update of them
 * (a claim, a mark sent) writes few pages, where a table ordered by the hashed key wrote one page
 * per key: half the SQLite time per send at 20,000 sends (bench section 9). Files of earlier
 * versions kept a table `entries` ordered by key (and an index on the expiry): its rows move here
 * once, in one transaction, whichever process opens the file first.
 */
function createTable(database: SqliteDatabase) {
	immediately(database, () => {
		database.exec('CREATE TABLE IF NOT EXISTS store_entries (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, value TEXT NOT NULL, expires_at INTEGER, phone_tag TEXT)');
		// phone_tag: a keyed tag of the phone number a row is about (erasePhone), added to files of earlier versions.
		if (!database.prepare("SELECT 1 FROM pragma_table_info('store_entries') WHERE name = 'phone_tag'").get()) database.exec('ALTER TABLE store_entries ADD COLUMN phone_tag TEXT');
		// Stryker disable next-line StringLiteral: the index only spares erasePhone a scan of the table; it finds the same rows.
		database.exec('CREATE INDEX IF NOT EXISTS store_entries_phone ON store_entries (phone_tag) WHERE phone_tag IS NOT NULL');
		if (database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'").get()) {
			database.exec('INSERT OR IGNORE INTO store_entries (key, value, expires_at) SELECT key, value, expires_at FROM entries; DROP TABLE entries;');
		}
	});
}

/**
 * `work` in a write transaction of its own: committed, or rolled back when it fails, unless SQLite
 * ended the transaction itself (its ROLLBACK would then fail, and hide the failure that ended it).
 */
function immediately<T>(database: SqliteDatabase, work: () => T): T {
	database.exec('BEGIN IMMEDIATE');
	let committed = false;
	try {
		const result = work();
		database.exec('COMMIT');
		committed = true;
		return result;
	} finally {
		if (!committed && database.isTransaction !== false) database.exec('ROLLBACK');
	}
}

export interface Statements {
	select: SqliteStatement;
	upsert: SqliteStatement;
	rewrite: SqliteStatement;
	remove: SqliteStatement;
	sweepChunk: SqliteStatement;
	sweepExpired: SqliteStatement;
	sweepCount: SqliteStatement;
	sweep: SqliteStatement;
	erase: SqliteStatement;
	legacyLeft: SqliteStatement;
}

/** The connection's settings, set at each open (`lockWaitMs`: one synchronous wait for another process's lock). */
export function configureConnection(database: SqliteDatabase, lockWaitMs: number): void {
	database.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(lockWaitMs))}`);
	// A new file gives free pages back to the disk (sqliteStore.ts afterSweep); earlier files keep theirs for reuse.
	database.exec('PRAGMA auto_vacuum = INCREMENTAL');
	// A deleted row's bytes are overwritten, not left in free space.
	database.exec('PRAGMA secure_delete = ON');
	database.exec('PRAGMA journal_mode = WAL');
	// With WAL, NORMAL loses nothing when a process dies, only the last commits on a power loss.
	database.exec('PRAGMA synchronous = NORMAL');
}

/** Makes or updates the table, and prepares the statements the store runs. */
export function prepareStatements(database: SqliteDatabase): Statements {
	createTable(database);
	return {
		select: database.prepare('SELECT id, value, expires_at, phone_tag FROM store_entries WHERE key = ?'),
		// A rewrite that does not know the number (a delivery report's mark) keeps the row's phone tag: erasing still finds it.
		upsert: database.prepare(
			'INSERT INTO store_entries (key, value, expires_at, phone_tag) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, phone_tag = coalesce(excluded.phone_tag, store_entries.phone_tag)',
		),
		// A row that keeps its phone tag: SQLite rewrites an index entry whose column is SET, even unchanged (19 against 32 µs a claim).
		rewrite: database.prepare('UPDATE store_entries SET value = ?, expires_at = ? WHERE id = ?'),
		remove: database.prepare('DELETE FROM store_entries WHERE key = ?'),
		erase: database.prepare('DELETE FROM store_entries WHERE phone_tag = ?'),
		legacyLeft: database.prepare(`SELECT 1 AS found FROM store_entries WHERE ${LEGACY_NAMES} LIMIT 1`),
		// A sweep step (sweepRows): the rows it may look at, the expired ones among them it removes, and where it stops.
		sweepChunk: database.prepare(
			'SELECT count(*) AS rows, max(id) AS last, (SELECT max(id) FROM store_entries) AS newest FROM (SELECT id FROM store_entries WHERE id > ? AND id <= ? ORDER BY id LIMIT ?)',
		),
		sweepExpired: database.prepare(
			'SELECT count(*) AS expired, max(id) AS last FROM (SELECT id FROM store_entries WHERE id > ? AND id <= ? AND expires_at <= ? ORDER BY id LIMIT ?)',
		),
		sweepCount: database.prepare('SELECT count(*) AS rows FROM store_entries WHERE id > ? AND id <= ?'),
		sweep: database.prepare('DELETE FROM store_entries WHERE id > ? AND id <= ? AND expires_at <= ?'),
	};
}

/** Whether the file's key check is this process's (written when the file has none yet): keyName.ts keyMismatch. */
export function keyCheckHolds(database: SqliteDatabase): boolean {
	const check = keyCheck();
	return immediately(database, () => {
		const row = database.prepare('SELECT value FROM store_entries WHERE key = ?').get(KEY_CHECK_NAME);
		if (!row) database.prepare('INSERT INTO store_entries (key, value, expires_at) VALUES (?, ?, NULL)').run(KEY_CHECK_NAME, check);
		return !row || row.value === check;
	});
}

/**
 * One sweep step's work, inside its transaction (sqliteStore.ts sweepStep): looks at the `look` rows
 * after `after` (up to `upTo`) in the order they were made, and removes the expired ones among them,
 * at most `rows`: when it finds that many, it stops after the last.
 */
export function sweepRows(statements: Statements, after: number, rows: number, upTo: number, look: number, now: number): { looked: number; removed: number; last: number; newest: number } {
	const chunk = statements.sweepChunk.get(after, upTo, look) as { rows?: unknown; last?: unknown; newest?: unknown } | undefined;
	// Stryker disable next-line OptionalChaining: an aggregate query always answers one row.
	const windowLast = typeof chunk?.last === 'number' ? chunk.last : after;
	const expired = statements.sweepExpired.get(after, windowLast, now, rows) as { expired?: unknown; last?: unknown } | undefined;
	// Stryker disable next-line OptionalChaining,ConditionalExpression: an aggregate query always answers one row, and with `rows` expired ones found its max(id) is a number.
	const full = Number(expired?.expired ?? 0) >= rows && typeof expired?.last === 'number';
	const last = full ? (expired.last as number) : windowLast;
	// Stryker disable next-line OptionalChaining: an aggregate query always answers one row.
	const looked = full ? Number((statements.sweepCount.get(after, last) as { rows?: unknown } | undefined)?.rows ?? 0) : Number(chunk?.rows ?? 0);
	const removed = Number(statements.sweep.run(after, last, now).changes);
	// Stryker disable next-line OptionalChaining,ConditionalExpression: an aggregate query always answers one row, and the key check's row keeps max(id) a number.
	return { looked, removed, last, newest: typeof chunk?.newest === 'number' ? chunk.newest : 0 };
}
