import { GatewayFailure, type GatewayFailureKind } from '../errors/failures';
import { LimiterWaitTooLong } from '../limits/limiter';
import { REDIS_URL_FIELD, RedisUnavailable } from '../store/redis/settings';
import { redactSecret } from '../errors/redact';
import type { OperationName } from '../gateway/catalog';
import { plural } from '../output/plural';

export interface FailureDetails {
	httpStatus?: number;
	gatewayCode?: number;
	retryAfterMs?: number;
	hint?: string;
}

/** Makes a call's failures with the appCode redacted from every text. */
export type MakeFailure = (operation: OperationName, kind: GatewayFailureKind, message: string, extra?: FailureDetails) => GatewayFailure;

export function failureMaker(secret: string): MakeFailure {
	return (operation, kind, message, extra = {}) =>
		new GatewayFailure({
			kind,
			operation,
			message: redactSecret(message, secret),
			...extra,
			hint: extra.hint === undefined ? undefined : redactSecret(extra.hint, secret),
		});
}

export function seconds(ms: number): string {
	return String(Math.round(ms / 100) / 10);
}

/**
 * Why the limiter's wait was too long, in words that stay true: a wait longer than the Timeout is
 * said to be; a shorter one is set against what was left of it (the item had waited for the rest).
 */
function waitedTooLong(error: LimiterWaitTooLong, timeoutMs: number): string {
	const timeout = `Timeout ${seconds(timeoutMs)} s`;
	if (error.waitMs === undefined) return ` for longer than this item may wait (${timeout})`;
	if (error.leftMs === undefined || error.waitMs > timeoutMs) return `, longer than this item may wait (${timeout})`;
	// Rounded down, where the wait is rounded up: the one never reads longer than the other.
	const left = Math.floor(Math.max(0, error.leftMs) / 100) / 10;
	return `, longer than the ${left} s left of the ${seconds(timeoutMs)} s this item may wait for its turn (${timeout})`;
}

/**
 * A failure before the request was written: the limiter (or a wait for it longer than the item's
 * Timeout), the shared limit's Redis, or a cancellation before dispatch. Nothing reached the
 * gateway, so the item may be run again.
 */
export function notSentFailure(fail: MakeFailure, operation: OperationName, error: unknown, signal: AbortSignal | undefined, timeoutMs: number): GatewayFailure {
	if (signal?.aborted) {
		return fail(operation, 'not-sent', 'not sent: the execution was cancelled before the request left', {
			hint: 'Nothing reached the gateway; running the item again sends it.',
		});
	}
	if (error instanceof RedisUnavailable) {
		return fail(operation, 'not-sent', `not sent: ${error.message}`, {
			hint: `Nothing reached the gateway. Fix "${error.field}" in the credential and run the item again, or clear "${REDIS_URL_FIELD}" to limit each n8n process on its own.`,
		});
	}
	if (error instanceof LimiterWaitTooLong) {
		return fail(operation, 'not-sent', `not sent: ${error.message}${waitedTooLong(error, timeoutMs)}`, {
			hint: error.shared
				? `Nothing reached the gateway. Another process may have paused this credential, or the shared Redis holds a wrong value: check the Redis of "${REDIS_URL_FIELD}", then run the item again.`
				: error.waitMs === undefined
					? 'Nothing reached the gateway. Other calls with this credential held every slot: raise "Max Concurrent Requests" or "Timeout (Seconds)" in the credential, or run fewer executions at once, then run the item again.'
					: 'Nothing reached the gateway. Raise "Timeout (Seconds)" or "Max Requests per Second" in the credential, or lower "Max Concurrent Requests", then run the item again.',
		});
	}
	const detail = error instanceof Error && error.message ? error.message : String(error);
	return fail(operation, 'not-sent', `not sent: waiting for a turn with this credential failed (${detail})`, {
		hint: 'Nothing reached the gateway; running the item again sends it.',
	});
}

/** The last failure of an item, saying how many attempts were made over how long. */
export function finalFailure(fail: MakeFailure, failure: GatewayFailure, attempts: number, budgetMs: number, deadline: number): GatewayFailure {
	if (failure.kind === 'timeout') {
		return fail(failure.operation, 'timeout', `no answer after ${plural(attempts, 'attempt')} over ${seconds(budgetMs)} s`, {
			hint: failure.hint,
		});
	}
	if (attempts === 1) return failure;
	const elapsedMs = budgetMs - Math.max(0, deadline - Date.now());
	return fail(failure.operation, failure.kind, `${failure.message} (${attempts} attempts over ${seconds(elapsedMs)} s)`, {
		httpStatus: failure.httpStatus,
		gatewayCode: failure.gatewayCode,
		retryAfterMs: failure.retryAfterMs,
		hint: failure.hint,
	});
}
