import { GatewayFailure } from './errors';
import { executionScope, type SendRecord } from './executionScope';
import { DEFAULT_SMS_LIMITS } from './spec';

export type SmsLimits = { perMinute: number; perHour: number; perDay: number };

const WINDOWS: Array<[keyof SmsLimits, number, string]> = [
	['perMinute', 60_000, 'a minute'],
	['perHour', 3_600_000, 'an hour'],
	['perDay', 86_400_000, 'a day'],
];

/** Whether a failed send certainly did not reach anyone, so that asking again is safe. */
export function sendCertainlyFailed(error: unknown): boolean {
	if (!(error instanceof GatewayFailure)) return false;
	if (error.kind === 'gateway-code') return true; // the gateway answered and refused
	if (error.kind === 'network') return true; // the transport reports 'network' for sends only when nothing left
	return error.kind === 'http-status' && (error.httpStatus ?? 500) < 500;
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
		this.sends = executionScope(executionId || `unscoped-${Date.now()}-${Math.random()}`).sends;
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

	/**
	 * Records the send before it starts, so that a re-run or a parallel item sees it; forgets it
	 * again only when the gateway certainly did not send it.
	 */
	track<T>(key: string, phone: string, send: () => Promise<T>): Promise<T> {
		const outcome = send();
		this.sends.set(key, { outcome, phone, at: Date.now() });
		outcome.catch((error) => {
			if (sendCertainlyFailed(error)) this.sends.delete(key);
		});
		return outcome;
	}
}
