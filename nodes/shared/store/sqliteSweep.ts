import { sleep } from 'n8n-workflow';

import { startSweep } from '../state/sweep';

/**
 * The SQLite store's sweep: expired rows leave the file within `everyMs` of their expiry (reads
 * already skip them). A pass walks the rows that were there when it began, in the order they were
 * made, each step one short transaction of its own that looks at up to `lookPerStep` rows and
 * removes up to `rowsPerStep`, so no step holds n8n's event loop long; it runs when the file is
 * opened and then every `everyMs` on a timer that never keeps the process alive. Tests change these.
 */
export const sweepTimes = {
	everyMs: 60_000,
	/** Rows one step removes at most: its commit writes a page of the key index per removed row (the names are hashes), so steps stay small. */
	rowsPerStep: 64,
	/**
	 * Rows one step looks at, at most: looking costs SQLite about 0.1 µs a row, a step's own work tens
	 * of µs, so a pass over a day's rows of a busy batch (180,000) takes 90 steps, not 2,800 (bench section 12).
	 */
	lookPerStep: 2048,
	/**
	 * Between two steps: a pass removes a day's rows in a burst, and its commits must not outrun the
	 * checkpoint thread (else a commit copies the WAL into the file itself, on n8n's thread).
	 */
	pauseMs: 10,
};

export interface SweepStep {
	/** Rows looked at: lookPerStep, fewer at the end of the pass or when the step found rowsPerStep expired ones first. */
	looked: number;
	removed: number;
	/** The id of the last row looked at: the next step starts after it. */
	last: number;
	/** The id of the newest row in the file as the step ran: the first step's bounds its pass. */
	newest: number;
	/** How long its transaction held this thread, in ms. */
	ms: number;
}

export interface SweepPass {
	steps: SweepStep[];
	removed: number;
}

export class SqliteSweeper {
	private timer?: { stop(): void };
	private running?: Promise<SweepPass>;

	constructor(
		/** One step from the row after `after` (0: the first) up to the row `upTo`, looking at `look` rows and removing `rows` at most; its own transaction. */
		private readonly step: (after: number, rows: number, upTo: number, look: number) => Promise<SweepStep>,
		/** After a pass: what follows removals (vacuum, a checkpoint that empties the WAL). */
		private readonly afterPass: (pass: SweepPass) => Promise<void>,
	) {}

	/** Starts the timer, and a pass right after the caller's work (the file was just opened). */
	start(): void {
		if (this.timer) return;
		this.timer = startSweep(() => void this.pass().catch(() => undefined), sweepTimes.everyMs);
		// A failed pass (the file busy or gone) is the next one's to do.
		void Promise.resolve().then(async () => await this.pass().catch(() => undefined));
	}

	stop(): void {
		this.timer?.stop();
		this.timer = undefined;
	}

	/** One pass over the whole file; a pass asked for while one runs joins it. */
	async pass(): Promise<SweepPass> {
		this.running ??= this.run().finally(() => {
			this.running = undefined;
		});
		return await this.running;
	}

	/** A pass that starts now: after the one running, if any (it may have looked at rows before they expired). */
	async freshPass(): Promise<SweepPass> {
		await this.running?.catch(() => undefined);
		return await this.pass();
	}

	private async run(): Promise<SweepPass> {
		const steps: SweepStep[] = [];
		// Rows made during the pass are the next pass's: a batch writing thousands of rows no longer drags the pass along behind it, a step per 64 rows.
		let upTo = Number.MAX_SAFE_INTEGER;
		for (let after = 0; ; ) {
			const step = await this.step(after, sweepTimes.rowsPerStep, upTo, sweepTimes.lookPerStep);
			upTo = Math.min(upTo, step.newest);
			steps.push(step);
			// The end of the rows, or a store closed meanwhile (the next open starts a pass).
			if ((step.looked < sweepTimes.lookPerStep && step.removed < sweepTimes.rowsPerStep) || !this.timer) break;
			after = step.last;
			if (step.removed > 0) await sleep(sweepTimes.pauseMs);
		}
		const pass = { steps, removed: steps.reduce((sum, step) => sum + step.removed, 0) };
		if (this.timer) await this.afterPass(pass);
		return pass;
	}
}
