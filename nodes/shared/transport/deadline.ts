/**
 * One attempt's deadline, from the request to the last byte of the answer: undici's
 * headersTimeout and bodyTimeout only bound the silences, so a body that trickles or never ends
 * would hold the item. Its signal aborts the request at the deadline or when the execution is
 * cancelled; `clear` must be called once the attempt is over. The timer is the platform's
 * AbortSignal.timeout, which is let go with the signal once nothing listens to it.
 */
export class AttemptDeadline {
	private readonly controller = new AbortController();
	private readonly timeout: AbortSignal;

	constructor(
		ms: number,
		private readonly cancel: AbortSignal | undefined,
	) {
		this.timeout = AbortSignal.timeout(Math.max(1, Math.ceil(ms)));
		this.timeout.addEventListener('abort', this.onDeadline, { once: true });
		if (cancel?.aborted) this.controller.abort(cancel.reason);
		else cancel?.addEventListener('abort', this.onCancel, { once: true });
	}

	get signal(): AbortSignal {
		return this.controller.signal;
	}

	/** True once the deadline passed before the execution was cancelled. */
	get expired(): boolean {
		return this.timeout.aborted && this.cancel?.aborted !== true;
	}

	clear(): void {
		this.timeout.removeEventListener('abort', this.onDeadline);
		this.cancel?.removeEventListener('abort', this.onCancel);
	}

	private readonly onDeadline = () => this.controller.abort(this.timeout.reason);

	private readonly onCancel = () => this.controller.abort(this.cancel?.reason);
}
