import { sleep } from 'n8n-workflow';

import { StoreUnavailable, type DurableStore, type StoreDecision, type StoreWrite } from './durableStore';
import { mayWorkNow, nextTurn } from './eventLoopShare';
import { hostClock } from './hostClock';
import { type SqliteDatabase, type SqliteModule } from './hostEnvironment';
import { checkWrittenKeys, keyMismatch, legacyRowKey, lifetimeMs, phoneTag, storedRowKey } from './keyName';
import { WalCheckpoints } from './sqliteCheckpoints';
import { isBusy, sqliteUnavailable } from './sqliteFailures';
import { prepareStoreFile } from './sqliteFiles';
import { configureConnection, keyCheckHolds, prepareStatements, sweepRows, type Statements } from './sqliteSchema';
import { SqliteSweeper, sweepTimes, type SweepPass, type SweepStep } from './sqliteSweep';

export const sqliteTimeouts = {
	/** How long a call waits in all for another process's write to finish; tests lower it. */
	busyMs: 5_000,
	/** One synchronous wait for the lock (it blocks this process's event loop), between pauses. */
	lockWaitMs: 15,
};

/** Free pages given back to the disk per step (auto_vacuum INCREMENTAL files), and steps per sweep: short steps, 4 MB a pass. */
const VACUUM_PAGES = 64;
const VACUUM_STEPS = 16;

/** Whether a sweep step wrote: only then is the checkpoint thread told of its commit. */
// Stryker disable next-line ArrowFunction,ConditionalExpression,EqualityOperator: only whether the checkpoint thread hears of the commit; a step that removed nothing wrote nothing to copy.
const removedRows = (step: { removed: number }) => step.removed > 0;

/** A row found under a key's name within a write transaction: where it is, and whose number it names. */
interface StoredRow {
	id: number;
	phoneTag: unknown;
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
	private readonly sweeper: SqliteSweeper;
	/** The file holds rows named as earlier versions named them: reads look there too, writes remove them. */
	// Stryker disable next-line BooleanLiteral: open() sets it before any call reads it.
	private legacyRows = false;
	/** The file was made with auto_vacuum INCREMENTAL (by this version): the sweep gives free pages back. */
	// Stryker disable next-line BooleanLiteral: open() sets it before any call reads it.
	private givesPagesBack = false;

	constructor(
		private readonly sqlite: SqliteModule,
		readonly file: string,
		private readonly clock: () => number = () => hostClock.now(),
	) {
		this.label = `the SQLite file ${file}`;
		this.checkpoints = new WalCheckpoints(file);
		this.sweeper = new SqliteSweeper(
			async (after, rows, upTo, look) => await this.sweepStep(after, rows, upTo, look),
			async (pass) => await this.afterSweep(pass),
		);
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
				const names = new Map(keys.map((key) => [key, storedRowKey(key)]));
				const rows = new Map<string, StoredRow>();
				const values = keys.map((key) => this.valueOf(statements, key, now, names.get(key), rows));
				let decision: StoreDecision<T>;
				try {
					decision = decide(values, now);
					checkWrittenKeys(keys, decision.writes);
				} catch (decideFailed) {
					// The caller's own error: passed on as it is, nothing written.
					return { decideFailed };
				}
				for (const write of decision.writes) this.write(statements, write, names.get(write.key) as string, rows, now);
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
		this.sweeper.stop();
		this.checkpoints.closed();
		try {
			// Stryker disable next-line OptionalChaining: without a file the call throws into the catch below, which ignores it as well.
			this.database?.close();
		} catch {
			// Already closed: nothing to release.
		}
		this.database = undefined;
		this.statements = undefined;
	}

	/**
	 * One write of a decision. A row read under its name whose phone tag stays is rewritten by its id,
	 * leaving the phone-tag index alone; any other write is an upsert. A row written is forgotten, so
	 * a second write of the same key never trusts what the first changed.
	 */
	private write(statements: Statements, write: StoreWrite, name: string, rows: Map<string, StoredRow>, now: number) {
		// Stryker disable next-line ConditionalExpression: removing a legacy name that no row has changes nothing (only slower).
		if (this.legacyRows) statements.remove.run(legacyRowKey(write.key));
		const row = rows.get(name);
		rows.delete(name);
		if (write.value === null) {
			statements.remove.run(name);
			return;
		}
		const ttl = lifetimeMs(write.ttlMs);
		// Stryker disable next-line ConditionalExpression: now + undefined is NaN, which node:sqlite binds as NULL: no expiry either way.
		const expiresAt = ttl === undefined ? null : now + ttl;
		const tag = write.phone === undefined ? null : phoneTag(write.phone);
		// Stryker disable next-line ConditionalExpression,LogicalOperator: the upsert leaves the same row (it keeps a known tag: coalesce); the rewrite only spares the phone-tag index.
		if (row !== undefined && (tag === null || tag === row.phoneTag)) statements.rewrite.run(write.value, expiresAt, row.id);
		else statements.upsert.run(name, write.value, expiresAt, tag);
	}

	/** A key's live value; with `rows`, also notes the row found under its name (expired or not) for write. */
	private valueOf(statements: Statements, key: string, now: number, name = storedRowKey(key), rows?: Map<string, StoredRow>): string | undefined {
		const own = statements.select.get(name);
		// Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral,LogicalOperator: `rows` only chooses the rewrite over the upsert, which leave the same row (write).
		if (own && rows && typeof own.id === 'number') rows.set(name, { id: own.id, phoneTag: own.phone_tag ?? null });
		const row = own ?? (this.legacyRows ? statements.select.get(legacyRowKey(key)) : undefined);
		if (!row) return undefined;
		const expiresAt = row.expires_at;
		if (expiresAt !== null && (typeof expiresAt !== 'number' || expiresAt <= now)) return undefined;
		if (typeof row.value !== 'string') throw new Error('a row whose value is not text');
		return row.value;
	}

	/** One step of the sweep (sqliteSweep.ts) in its own transaction: sqliteSchema.ts sweepRows. */
	private async sweepStep(after: number, rows: number, upTo: number, look: number): Promise<SweepStep> {
		const now = this.clock();
		return await this.use('sweeping', (database, statements) => {
			const started = performance.now();
			const step = this.inTransaction(database, () => {
				const found = sweepRows(statements, after, rows, upTo, look, now);
				// Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: legacyLeft looks at the whole file, so it is right at any step; asked at the pass's end only to spare the query.
				if (found.looked < look && found.removed < rows) this.legacyRows = statements.legacyLeft.get() !== undefined;
				return found;
			}, removedRows);
			// From BEGIN to after COMMIT: how long the step held n8n's thread.
			return { ...step, ms: performance.now() - started };
		});
	}

	/** After a pass that removed rows: free pages back to the disk, and the WAL emptied so that no copy of a removed row stays in it. */
	private async afterSweep(pass: SweepPass): Promise<void> {
		if (pass.removed === 0) return;
		// A file made before auto_vacuum keeps its free pages for new rows (zeroed by secure_delete).
		for (let step = 0; step < (this.givesPagesBack ? VACUUM_STEPS : 0); step++) {
			const free = await this.use('giving free pages back', (database) => {
				database.exec(`PRAGMA incremental_vacuum(${VACUUM_PAGES})`);
				// Stryker disable next-line OptionalChaining: the pragma always answers one row.
				return Number(database.prepare('PRAGMA freelist_count').get()?.freelist_count ?? 0);
			});
			if (free === 0) break;
			await sleep(sweepTimes.pauseMs);
		}
		await this.checkpoints.truncate();
	}

	/** Runs a pass of the sweep from now (tests, the bench; the timer runs them otherwise). */
	async sweepNow(): Promise<SweepPass> {
		return await this.sweeper.freshPass();
	}

	/**
	 * Deletes every row written about this phone number (StoreWrite.phone), then empties the WAL so
	 * that their bytes leave the file too. Returns the rows deleted.
	 */
	async erasePhone(phone: string): Promise<number> {
		const tag = phoneTag(phone);
		const removed = await this.use('erasing', (database, statements) => this.inTransaction(database, () => Number(statements.erase.run(tag).changes)));
		await this.checkpoints.truncate();
		return removed;
	}

	/** `work` in a write transaction, committed (and handed to the checkpoints when it `wrote`) or rolled back. */
	// Stryker disable next-line ArrowFunction,BooleanLiteral: the default only tells the checkpoint thread of the commit (see below).
	private inTransaction<T>(database: SqliteDatabase, work: () => T, wrote: (result: T) => boolean = () => true): T {
		database.exec('BEGIN IMMEDIATE');
		let committed = false;
		try {
			const result = work();
			database.exec('COMMIT');
			committed = true;
			// Stryker disable next-line ConditionalExpression,CallExpression: only whether the checkpoint thread starts now or at the next commit; the data is committed either way.
			if (wrote(result)) this.checkpoints.committed();
			return result;
		} finally {
			if (!committed) this.rollBack(database);
		}
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
			// The checkpoint thread's write is short: wait for it here, where n8n's other work goes on.
			while (what !== 'reading' && this.checkpoints.threadWriting() && Date.now() - started < sqliteTimeouts.busyMs) await sleep(1);
			const attempt = this.attempt(what, work);
			if ('value' in attempt) return attempt.value;
			if (!attempt.busy || Date.now() - started >= sqliteTimeouts.busyMs) throw attempt.failure;
			// Stryker disable next-line ArithmeticOperator: the pause only spreads the processes' retries; any pause waits and tries again.
			await sleep(1 + Math.floor(Math.random() * 4));
		}
	}

	private attempt<T>(what: string, work: (database: SqliteDatabase, statements: Statements) => T): { value: T } | { failure: StoreUnavailable; busy: boolean } {
		let opened: { database: SqliteDatabase; statements: Statements };
		try {
			opened = this.open();
		} catch (error) {
			// Stryker disable next-line CallExpression: open() keeps nothing it failed to open (the next open starts the sweep and hands the checkpoints its connection anew).
			this.close();
			return { failure: error instanceof StoreUnavailable ? error : this.unavailable('opening', error), busy: isBusy(error) };
		}
		try {
			return { value: work(opened.database, opened.statements) };
		} catch (error) {
			return { failure: this.unavailable(what, error), busy: isBusy(error) };
		}
	}

	private open(): { database: SqliteDatabase; statements: Statements } {
		// Stryker disable next-line LogicalOperator: both are set together (open) and cleared together (close).
		if (this.database && this.statements) return { database: this.database, statements: this.statements };
		prepareStoreFile(this.file);
		const database = new this.sqlite.DatabaseSync(this.file);
		let ready = false;
		try {
			configureConnection(database, Math.min(sqliteTimeouts.lockWaitMs, sqliteTimeouts.busyMs));
			this.checkpoints.opened(database);
			const statements = prepareStatements(database);
			if (!keyCheckHolds(database)) throw new StoreUnavailable(this.label, keyMismatch(this.label));
			// Stryker disable next-line ConditionalExpression: looking for legacy names in a file without them finds nothing (only slower).
			this.legacyRows = statements.legacyLeft.get() !== undefined;
			// Stryker disable next-line OptionalChaining: the pragma always answers one row.
			this.givesPagesBack = database.prepare('PRAGMA auto_vacuum').get()?.auto_vacuum === 2;
			this.database = database;
			this.statements = statements;
			this.sweeper.start();
			ready = true;
			return { database, statements };
		} finally {
			if (!ready) database.close();
		}
	}

	private unavailable(what: string, error: unknown): StoreUnavailable {
		return sqliteUnavailable(this.label, what, error, sqliteTimeouts.busyMs);
	}
}
