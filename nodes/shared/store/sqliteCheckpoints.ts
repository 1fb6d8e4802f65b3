// eslint-disable-next-line @n8n/community-nodes/no-restricted-imports -- the SQLite file's checkpoint thread (scripts/n8n-accepted-findings.mjs)
import { Worker } from 'node:worker_threads';

import { sleep } from 'n8n-workflow';

import { startSweep } from '../state/sweep';
import type { SqliteDatabase } from './hostEnvironment';

/** WAL pages after which a commit copies them into the file itself, while no checkpoint thread runs (SQLite's default is 1,000). */
const WAL_CHECKPOINT_PAGES = 250;
/** The same while the checkpoint thread runs: reached only when the thread falls behind. */
const WAL_CHECKPOINT_PAGES_WITH_THREAD = 4_000;
/** The thread's pause after a checkpoint, in ms, so that steady writes do not keep it busy. */
const CHECKPOINT_PAUSE_MS = 25;

export const checkpointThreadTimes = {
	/** A thread with no commit for this long ends (it holds about 18 MB); the next commit starts one. Tests lower it. */
	idleMs: 30_000,
};

/** How long a checkpoint that empties the WAL waits for other connections, in the thread (it holds no event loop). */
const TRUNCATE_WAIT_MS = 1_000;
/**
 * The WAL's size once the thread starts it anew (SQLite's journal_size_limit): a burst of writes
 * grows it (up to the 4,000-page mark) and it would keep that size on disk. 1,000 pages.
 */
const WAL_KEPT_BYTES = 4 * 1024 * 1024;

/**
 * The thread's code, plain CommonJS run with `eval` (no file to find, in the package or in tests).
 * A PASSIVE checkpoint waits for nobody: a busy file or another process's checkpoint is left for
 * the next round. A TRUNCATE one (after the sweep removed rows) also empties the WAL, so that no
 * old copy of a removed row stays in it; it waits a little for readers. Any other failure closes
 * its connection, and the next round opens it again.
 *
 * Once the whole WAL is in the file, the next commit starts the WAL anew, and that commit waits for
 * the disk to sync the WAL's new header (SQLite does so even with synchronous = NORMAL). The
 * thread makes that commit itself, a rewrite of the file's user_version with its own value, so
 * that the wait is the thread's and not n8n's (up to 55 ms each on a busy shared disk, hundreds a
 * minute under steady writes: bench section 11). Meanwhile it holds the file's write lock, and says
 * so in `writing` (shared memory), so that the store's writes wait for it without holding n8n's
 * event loop (sqliteStore.ts) rather than in SQLite's lock wait, which does; the thread never
 * waits for the store. Starting anew also cuts the WAL file back to WAL_KEPT_BYTES.
 */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
let database;
const writing = new Int32Array(workerData.writing);
function startWalAnew(result) {
	if (!result || result.busy !== 0 || result.log !== result.checkpointed) return;
	Atomics.store(writing, 0, 1);
	try {
		database.exec('BEGIN IMMEDIATE');
	} catch {
		Atomics.store(writing, 0, 0);
		return;
	}
	try {
		const version = Number(database.prepare('PRAGMA user_version').get().user_version) || 0;
		database.exec('PRAGMA user_version = ' + version);
		database.exec('COMMIT');
	} catch {
		try { database.exec('ROLLBACK'); } catch {}
	} finally {
		Atomics.store(writing, 0, 0);
	}
}
parentPort.on('message', (mode) => {
	try {
		if (!database) {
			database = new DatabaseSync(workerData.file);
			database.exec('PRAGMA busy_timeout = 0');
			database.exec('PRAGMA synchronous = NORMAL');
			database.exec('PRAGMA journal_size_limit = ${WAL_KEPT_BYTES}');
		}
		let result;
		if (mode === 'truncate') {
			database.exec('PRAGMA busy_timeout = ${TRUNCATE_WAIT_MS}');
			try { result = database.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get(); } finally { database.exec('PRAGMA busy_timeout = 0'); }
		} else result = database.prepare('PRAGMA wal_checkpoint(PASSIVE)').get();
		startWalAnew(result);
	} catch {
		try { database?.close(); } catch {}
		database = undefined;
	}
	parentPort.postMessage('done');
});
`;

/**
 * Copies the WAL into the SQLite file from a thread of its own. A checkpoint writes every page the
 * WAL holds into the file and waits for the disk twice (fsync); on n8n's main thread that wait held
 * the event loop, and it grew with the file (each batch changes more pages of a bigger key index:
 * most of the growth of the send records' time in bench section 9). The store starts it at a commit
 * and it ends when idle; the main connection keeps a checkpoint of its own at a higher mark, for
 * when the thread falls behind, and at the usual mark while no thread runs (`onStop`).
 */
class CheckpointThread {
	private worker?: Worker;
	/** A checkpoint was asked for and has not answered. */
	private asked = false;
	/** Commits since the last ask. */
	private written = false;
	/** In the pause after a checkpoint. */
	private pausing = false;
	private commits = 0;
	private commitsSeenIdle = 0;
	/** Callers waiting for a checkpoint that empties the WAL: those of the one asked for, and those for the next. */
	private truncating: Array<(done: boolean) => void> = [];
	private truncateNext: Array<(done: boolean) => void> = [];
	private readonly idleCheck?: { stop(): void };
	/** 1 while the thread writes (THREAD_CODE's startWalAnew). */
	private readonly writing = new Int32Array(new SharedArrayBuffer(4));

	/** `onStop(failed)`: the thread ended, idle (false) or because it cannot run here (true). */
	constructor(
		file: string,
		private readonly onStop: (failed: boolean) => void,
	) {
		try {
			const worker = new Worker(THREAD_CODE, { eval: true, workerData: { file, writing: this.writing.buffer } });
			worker.on('message', () => this.answered());
			worker.on('error', () => this.stop(true));
			// An exit it was not asked for: the thread died.
			worker.on('exit', () => this.stop(true));
			// After the listeners: adding a 'message' listener holds the process open again.
			worker.unref();
			this.worker = worker;
		} catch {
			// No threads here (a sandbox): the main connection checkpoints as before.
			this.worker = undefined;
			return;
		}
		this.idleCheck = startSweep(() => {
			if (this.commits === this.commitsSeenIdle && !this.asked) this.stop(false);
			this.commitsSeenIdle = this.commits;
		}, checkpointThreadTimes.idleMs);
	}

	/** The thread is writing (starting the WAL anew): it holds, or is taking, the file's write lock. */
	get writingNow(): boolean {
		return this.worker !== undefined && Atomics.load(this.writing, 0) === 1;
	}

	get running(): boolean {
		return this.worker !== undefined;
	}

	/** Called after each commit: the thread copies it into the file soon. */
	committed(): void {
		this.commits++;
		this.written = true;
		if (!this.asked && !this.pausing) this.ask();
	}

	/** A checkpoint that empties the WAL, soon; false when the thread ended first. */
	async truncate(): Promise<boolean> {
		if (!this.worker) return false;
		const done = new Promise<boolean>((resolve) => this.truncateNext.push(resolve));
		// Held open while a caller waits (a command that erases, then exits), unref'd again after.
		this.worker.ref();
		if (!this.asked) this.ask();
		try {
			return await done;
		} finally {
			if (this.truncating.length === 0 && this.truncateNext.length === 0) this.worker?.unref();
		}
	}

	/** Ends the thread (the store closes, it was idle, or it failed); the main connection checkpoints again. */
	stop(failed = false): void {
		const worker = this.worker;
		if (!worker) return;
		this.worker = undefined;
		for (const resolve of [...this.truncating.splice(0), ...this.truncateNext.splice(0)]) resolve(false);
		this.idleCheck?.stop();
		void worker.terminate().catch(() => undefined);
		this.onStop(failed);
	}

	private ask() {
		if (!this.worker) return;
		this.written = false;
		this.asked = true;
		this.truncating = this.truncateNext.splice(0);
		this.worker.postMessage(this.truncating.length > 0 ? 'truncate' : 'passive');
	}

	private answered() {
		this.asked = false;
		for (const resolve of this.truncating.splice(0)) resolve(true);
		if (this.truncateNext.length > 0) return this.ask();
		if (!this.written || !this.worker) return;
		this.pausing = true;
		void sleep(CHECKPOINT_PAUSE_MS).then(() => {
			this.pausing = false;
			if (this.written) this.ask();
		});
	}
}

/**
 * Who copies an SQLite store file's WAL into the file: a CheckpointThread, started at a commit and
 * ended when idle, or the main connection itself (every 250 WAL pages, a short pause of n8n's event
 * loop) while none runs, and from then on once threads failed here.
 */
export class WalCheckpoints {
	private thread?: CheckpointThread;
	private database?: SqliteDatabase;
	/** Threads cannot run here, or one died: the main connection checkpoints from now on. */
	private threadsFailed = false;

	constructor(private readonly file: string) {}

	/** The store opened its connection. */
	opened(database: SqliteDatabase): void {
		this.database = database;
		this.setMark(this.thread ? WAL_CHECKPOINT_PAGES_WITH_THREAD : WAL_CHECKPOINT_PAGES);
	}

	/** After each commit of the store. */
	committed(): void {
		if (!this.thread && !this.threadsFailed) {
			const thread = new CheckpointThread(this.file, (failed) => this.threadEnded(failed));
			if (thread.running) {
				this.thread = thread;
				this.setMark(WAL_CHECKPOINT_PAGES_WITH_THREAD);
			} else this.threadsFailed = true;
		}
		this.thread?.committed();
	}

	/**
	 * Copies the WAL into the file and empties it (after rows were removed: their old copies leave the
	 * WAL's bytes), on the thread when one runs, else on the main connection. A busy file is left for the next sweep.
	 */
	async truncate(): Promise<void> {
		if (this.thread && (await this.thread.truncate())) return;
		try {
			this.database?.exec('PRAGMA wal_checkpoint(TRUNCATE)');
		} catch {
			// Busy: the next sweep's checkpoint empties it.
		}
	}

	/** This store's checkpoint thread is writing: a write now would wait for the lock, holding n8n's event loop. */
	threadWriting(): boolean {
		return this.thread?.writingNow === true;
	}

	/** The store closed its connection. */
	closed(): void {
		this.thread?.stop();
		this.database = undefined;
	}

	private threadEnded(failed: boolean) {
		this.thread = undefined;
		if (failed) this.threadsFailed = true;
		this.setMark(WAL_CHECKPOINT_PAGES);
	}

	private setMark(pages: number) {
		try {
			this.database?.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
		} catch {
			// A file that cannot take a pragma fails the store's next call too, and is opened anew.
		}
	}
}
