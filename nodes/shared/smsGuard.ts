import { GatewayFailure } from './errors';
import { executionScope, type ExecutionScope, type SendRecord } from './executionScope';
import { DEFAULT_SMS_LIMITS } from './spec';

export type SmsLimits = { perMinute: number; perHour: number; perDay: number };

const WINDOWS: Array<[keyof SmsLimits, number, string]> = [
	['perMinute', 60_000, 'a minute'],
	['perHour', 3_600_000, 'an hour'],
	['perDay', 86_400_000, 'a day'],
];

/** Whether a failed non-idempotent call certainly did not take effect, so that making it again is safe. */
export function callCertainlyFailed(error: unknown): boolean {
	if (!(error instanceof GatewayFailure)) return false;
	if (error.kind === 'gateway-code') return true; // the gateway answered and refused
	if (error.kind === 'network') return true; // for non-idempotent calls the transport says 'network' only when nothing left
	return error.kind === 'http-status' && (error.httpStatus ?? 500) < 500;
}

function scopeOf(executionId: string): ExecutionScope {
	// Without an execution id there is nothing to share with a re-run; a private scope keeps runs apart.
	return executionScope(executionId || `unscoped-${Date.now()}-${Math.random()}`);
}

/**
 * Keeps a call's outcome under `key` for the execution, so that a re-run finds it instead of
 * calling again; forgets it only when the call certainly did not take effect.
 */
function remember<Entry extends { outcome: Promise<unknown> }>(memory: Map<string, Entry>, key: string, entry: Entry) {
	memory.set(key, entry);
	entry.outcome.catch((error) => {
		if (callCertainlyFailed(error) && memory.get(key) === entry) memory.delete(key);
	});
}

/**
 * At most one send per item and execution, and the per-number limits within the execution.
 * n8n's Retry On Fail re-runs execute() with every item; a re-run finds the earlier send here.
 */
export class SmsSendGuard {
	private readonly sends: Map<string, SendRecord>;

	constructor(
		executionId: string,
		private readonly limits: SmsLimits = DEFAULT_SMS_LIMITS,
	) {
		this.sends = scopeOf(executionId).sends;
	}

	/** The earlier send of this item in this execution, if any. */
	previous(key: string): SendRecord | undefined {
		return this.sends.get(key);
	}

	/**
	 * Which limit one more send to `phone` would break, or undefined. `plannedEarlier` counts the
	 * sends to the same number that earlier items of this run will make.
	 */
	limitBrokenBy(phone: string, plannedEarlier: number, now = Date.now()): string | undefined {
		const times = [...this.sends.values()].filter((record) => record.phone === phone).map((record) => record.at);
		for (const [limit, windowMs, label] of WINDOWS) {
			const allowed = this.limits[limit];
			if (times.filter((time) => now - time < windowMs).length + plannedEarlier >= allowed) {
				return `would be message ${allowed + 1} to ${phone} within ${label}; the limit is ${allowed} ${label}`;
			}
		}
		return undefined;
	}

	/** Records the send as it starts, so that a re-run or a parallel item sees it. */
	track<T>(key: string, phone: string, send: () => Promise<T>): Promise<T> {
		const outcome = send();
		remember(this.sends, key, { outcome, phone, at: Date.now() });
		return outcome;
	}
}

/**
 * At most one create, update or delete per item and execution: a re-run by Retry On Fail gets the
 * earlier answer instead of creating a second signature or deleting one that is already gone.
 */
export class ChangeGuard {
	private readonly changes: Map<string, { outcome: Promise<unknown> }>;

	constructor(executionId: string) {
		this.changes = scopeOf(executionId).changes;
	}

	previous(key: string): Promise<unknown> | undefined {
		return this.changes.get(key)?.outcome;
	}

	track<T>(key: string, change: () => Promise<T>): Promise<T> {
		const outcome = change();
		remember(this.changes, key, { outcome });
		return outcome;
	}
}
