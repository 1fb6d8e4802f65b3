import { startSweep } from '../state/sweep';

/** How often the attempts in flight are checked: an attempt ends at most this long after its deadline. */
const WATCH_MS = 50;

const inFlight = new Set<AttemptDeadline>();
let watch: { stop(): void } | undefined;

function watchAttempts() {
	const now = Date.now();
	for (const attempt of inFlight) attempt.check(now);
	if (inFlight.size === 0) {
		// Stryker disable next-line OptionalChaining: only the watch's own timer calls this, so the watch is set
		watch?.stop();
		watch = undefined;
	}
}

/**
 * One attempt's deadline, from the request to the last byte of the answer: undici's
 * headersTimeout and bodyTimeout only bound the silences, so a body that trickles or never ends
 * would hold the item, and a request that never gets written (a connection or proxy tunnel that
 * never opens) would too. It ends the exchange (through the way to end it the pool attaches) at
 * the deadline or when the execution is cancelled; `clear` must be called once the
 * attempt is over. It is the only bound: the pool turns undici's timers off. One watch for all
 * attempts in flight, and no AbortController, timer or listener per attempt: this runs for every
 * item (bench/).
 */
export class AttemptDeadline {
	private readonly at: number;
	private abortRequest?: (reason: Error) => void;
	/** Why the attempt was ended, once it was. */
	private endedBy?: Error;
	/** True once the deadline passed before the execution was cancelled. */
	expired = false;

	constructor(
		ms: number,
		private readonly cancel: AbortSignal | undefined,
	) {
		this.at = Date.now() + ms;
		inFlight.add(this);
		watch ??= startSweep(watchAttempts, WATCH_MS);
	}

	/** How to end the exchange: at once if the attempt already ended. */
	attach(abort: (reason: Error) => void): void {
		this.abortRequest = abort;
		this.check(Date.now());
		if (this.endedBy) abort(this.endedBy);
	}

	clear(): void {
		inFlight.delete(this);
		this.abortRequest = undefined;
	}

	/** Ends the attempt once the execution is cancelled or the deadline has passed. */
	check(now: number): void {
		if (this.endedBy) return;
		if (this.cancel?.aborted) this.end(new Error('the execution was cancelled'));
		else if (now >= this.at) {
			this.expired = true;
			this.end(new Error('the attempt reached its deadline'));
		}
	}

	private end(reason: Error): void {
		this.endedBy = reason;
		this.abortRequest?.(reason);
	}
}
