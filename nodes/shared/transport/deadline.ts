import { startSweep } from '../state/sweep';

/** How often the attempts in flight are checked: an attempt ends at most this long after its deadline. */
const WATCH_MS = 50;

const inFlight = new Set<AttemptDeadline>();
let watch: { stop(): void } | undefined;

function watchAttempts() {
	const now = Date.now();
	for (const attempt of inFlight) attempt.check(now);
	if (inFlight.size === 0) {
		watch?.stop();
		watch = undefined;
	}
}

/**
 * One attempt's deadline, from the request to the last byte of the answer: undici's
 * headersTimeout and bodyTimeout only bound the silences, so a body that trickles or never ends
 * would hold the item. Its signal aborts the request at the deadline or when the execution is
 * cancelled; `clear` must be called once the attempt is over. One watch for all attempts in
 * flight, rather than a timer and listeners per attempt: this runs for every item (bench/).
 */
export class AttemptDeadline {
	private readonly controller = new AbortController();
	private readonly at: number;
	/** True once the deadline passed before the execution was cancelled. */
	expired = false;

	constructor(
		ms: number,
		private readonly cancel: AbortSignal | undefined,
	) {
		this.at = Date.now() + ms;
		if (cancel?.aborted) this.controller.abort(cancel.reason);
		inFlight.add(this);
		watch ??= startSweep(watchAttempts, WATCH_MS);
	}

	get signal(): AbortSignal {
		return this.controller.signal;
	}

	clear(): void {
		inFlight.delete(this);
	}

	/** Aborts the attempt once the execution is cancelled or the deadline has passed. */
	check(now: number): void {
		if (this.controller.signal.aborted) return;
		if (this.cancel?.aborted) this.controller.abort(this.cancel.reason);
		else if (now >= this.at) {
			this.expired = true;
			this.controller.abort(new Error('the attempt reached its deadline'));
		}
	}
}
