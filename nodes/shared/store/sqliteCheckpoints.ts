// eslint-disable-next-line @n8n/community-nodes/no-restricted-imports -- the SQLite file's checkpoint thread (scripts/n8n-accepted-findings.mjs)
import { Worker } from 'node:worker_threads';

import { sleep } from 'n8n-workflow';

/** WAL pages after which a commit copies them into the file itself, when no checkpoint thread runs (SQLite's default is 1,000). */
export const WAL_CHECKPOINT_PAGES = 250;
/** The same while the checkpoint thread runs: reached only when the thread falls behind. */
export const WAL_CHECKPOINT_PAGES_WITH_THREAD = 4_000;
/** The thread's pause after a checkpoint, in ms, so that steady writes do not keep it busy. */
const CHECKPOINT_PAUSE_MS = 25;

/**
 * The thread's code, plain CommonJS run with `eval` (no file to find, in the package or in tests).
 * A PASSIVE checkpoint waits for nobody: a busy file or another process's checkpoint is left for
 * the next round. Any other failure closes its connection, and the next round opens it again.
 */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
let database;
parentPort.on('message', () => {
	try {
		if (!database) {
			database = new DatabaseSync(workerData.file);
			database.exec('PRAGMA busy_timeout = 0');
			database.exec('PRAGMA synchronous = NORMAL');
		}
		database.exec('PRAGMA wal_checkpoint(PASSIVE)');
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
 * most of the growth of the send records' time in bench section 9). The main connection keeps a
 * checkpoint of its own at a higher mark, for when the thread falls behind, and at the usual mark
 * once the thread has stopped (`onStop`).
 */
export class CheckpointThread {
	private worker?: Worker;
	/** A checkpoint was asked for and has not answered. */
	private asked = false;
	/** Commits since the last ask. */
	private written = false;
	/** In the pause after a checkpoint. */
	private pausing = false;

	constructor(
		file: string,
		private readonly onStop: () => void,
	) {
		try {
			const worker = new Worker(THREAD_CODE, { eval: true, workerData: { file } });
			worker.on('message', () => this.answered());
			worker.on('error', () => this.stop());
			worker.on('exit', () => this.stop());
			// After the listeners: adding a 'message' listener holds the process open again.
			worker.unref();
			this.worker = worker;
		} catch {
			// No threads here (a sandbox): the main connection checkpoints as before.
			this.worker = undefined;
		}
	}

	get running(): boolean {
		return this.worker !== undefined;
	}

	/** Called after each commit: the thread copies it into the file soon. */
	committed(): void {
		this.written = true;
		if (!this.asked && !this.pausing) this.ask();
	}

	/** Ends the thread (the store closes, or the thread failed); the main connection checkpoints again. */
	stop(): void {
		const worker = this.worker;
		if (!worker) return;
		this.worker = undefined;
		void worker.terminate().catch(() => undefined);
		this.onStop();
	}

	private ask() {
		if (!this.worker) return;
		this.written = false;
		this.asked = true;
		this.worker.postMessage(0);
	}

	private answered() {
		this.asked = false;
		if (!this.written || !this.worker) return;
		this.pausing = true;
		void sleep(CHECKPOINT_PAUSE_MS).then(() => {
			this.pausing = false;
			if (this.written) this.ask();
		});
	}
}
