import type { Logger } from 'n8n-workflow';
import type { z } from 'zod/v4';

import type { GatewayFailure } from '../errors/failures';
import { GatewayLimiter, LimiterWaitTooLong, limiterFor } from '../limits/limiter';
import { redactSecret, rememberSecret } from '../errors/redact';
import { accountKeyOf } from '../gateway/account';
import { guardAccountOf, type GuardAccount } from '../gateway/accountScope';
import { OPERATIONS, type OperationName } from '../gateway/catalog';
import { abortableSleep } from '../limits/abortableSleep';
import { readEnvelope, type AttemptResult, type GatewayAnswer } from './answer';
import { buildQueryString, GatewayAttempts, type QueryValue } from './attempt';
import { failureMaker, finalFailure, notSentFailure, seconds, type MakeFailure } from './failure';
import { backoffDelay, MAX_RETRY_AFTER_MS, MIN_ATTEMPT_MS } from './retry';
import type { SpendMeter } from '../money/spend';
import type { GatewaySettings } from './settings';

// The transport's stages, in order: settings (settings.ts), one attempt over the pooled connection
// (attempt.ts, pool.ts), reading the answer (answer.ts), the retry policy (retry.ts) and the failures (failure.ts).
export type { GatewayAnswer } from './answer';
export type { QueryValue } from './attempt';

export interface CallOptions {
	signal?: AbortSignal;
	logger?: Logger;
	/** The first attempt's turn, asked for before the call (GatewayClient.firstTurn). */
	turn?: EarlyTurn;
}

/** A first turn asked for ahead of its call: handed to `call` (CallOptions.turn), or dropped. */
export interface EarlyTurn {
	readonly given: Promise<{ release: () => void; at: number }>;
	/** Gives the turn back (the call is not made); safe whatever became of it. */
	drop(): void;
}

/**
 * An early turn used later than this is given back and taken again: its start, booked in the shared
 * rate, has passed, and the gateway's window allows a late start only a small margin (sharedRate.ts).
 */
export const earlyTurns = { freshMs: 10 };

/** Where an attempt stands when it asks for its turn: the item's deadline once started, the attempt before's failure. */
interface TurnAsked {
	deadline?: number;
	minAttemptMs: number;
	budgetMs: number;
	lastFailure?: GatewayFailure;
	attempt: number;
}

/** The spend of the execution the client calls for: each attempt of a paid call is counted, or refused, there. */
export type AttemptSpend = Pick<SpendMeter, 'reserveAttempt'>;

/**
 * The only place that talks HTTP to the gateway: limiter, timeout, retries for idempotent
 * operations, envelope and schema checks, and redaction of the appCode from every text it makes.
 */
export class GatewayClient {
	readonly settings: GatewaySettings;
	private readonly limiter: GatewayLimiter;
	private readonly fail: MakeFailure;
	private readonly attempts: GatewayAttempts;

	/** Identifies the account without holding the appCode itself. */
	readonly accountKey: string;

	/** The account the guardrails (opt-out list, budgets, telephone quota) belong to: stable across appCodes, spellings and stores. */
	readonly guard: GuardAccount;

	/** Where the attempts of paid calls are counted against the credential's cap; none for clients outside an execution. */
	private readonly spend?: AttemptSpend;

	/**
	 * `ownLimiter` gives the client a limiter of its own instead of the credential's shared one:
	 * the credential test must answer at once, never wait behind a pause other calls caused.
	 * `guard`: the run's account, the one its meter counts for (clientForNode.ts); without it the
	 * account is the settings' alone, with no credential id to follow.
	 */
	constructor(settings: GatewaySettings, { ownLimiter = false, spend, guard }: { ownLimiter?: boolean; spend?: AttemptSpend; guard?: GuardAccount } = {}) {
		this.settings = settings;
		this.spend = spend;
		rememberSecret(settings.appCode);
		this.limiter = ownLimiter ? new GatewayLimiter(settings.limiter) : limiterFor(settings.baseUrl, settings.appCode, settings.limiter);
		this.accountKey = accountKeyOf(settings.baseUrl, settings.appCode);
		this.guard = guard ?? guardAccountOf(settings);
		this.fail = failureMaker(settings.appCode);
		this.attempts = new GatewayAttempts(settings, this.fail);
	}

	/** Same key for the same question to the same account: used to ask (and pay) only once. */
	questionKey(operation: OperationName, params: Record<string, QueryValue>): string {
		// Joined, not concatenated: one flat string, where a template literal leaves a tree of pieces
		// (about twice the bytes), and the key of every paid answer stays for the execution (bench section 5).
		return [this.accountKey, operation, buildQueryString(params)].join('|');
	}

	/**
	 * One item's call. The credential's Timeout bounds it whole, retries and waits included: the
	 * clock starts when the first attempt gets its turn, each attempt gets what is left (from its
	 * request to the last byte of its answer), and a retry happens only while time remains for it.
	 * The wait for the first turn (a free slot, the rate, a pause after a 429, the shared rate in
	 * Redis) is bounded by the Timeout too: a longer one fails the item, not sent. A pause the
	 * package cut short (a Retry-After longer than a call may wait) never does: the item starts at
	 * its end or at its own deadline, whichever comes first (limits/limiter.ts). Each
	 * attempt of a paid call counts against the spending cap before it is sent (see overCap).
	 */
	async call<Schema extends z.ZodType>(
		operation: OperationName,
		params: Record<string, QueryValue>,
		schema: Schema,
		options: CallOptions = {},
	): Promise<GatewayAnswer<z.output<Schema>>> {
		const { idempotent } = OPERATIONS[operation];
		const maxAttempts = idempotent ? 1 + this.settings.maxRetries : 1;
		const budgetMs = this.settings.timeoutMs;
		// A retry that could get only a sliver of time would be paid for and cut off: it is not made.
		const minAttemptMs = Math.min(MIN_ATTEMPT_MS, budgetMs / 4);
		let deadline: number | undefined;
		let lastFailure: GatewayFailure | undefined;
		let lastMayBeBilled = false;

		for (let attempt = 1; ; attempt++) {
			const asked: TurnAsked = { deadline, minAttemptMs, budgetMs, lastFailure, attempt };
			const release = attempt === 1 && options.turn ? await this.usedTurn(operation, options.signal, options.turn, asked) : await this.takeTurn(operation, options.signal, asked);
			deadline ??= Date.now() + budgetMs;
			const reserved = this.spend ? await this.spend.reserveAttempt(operation) : undefined;
			if (reserved?.refusal !== undefined) {
				release();
				throw this.overCap(operation, reserved, lastFailure && { failure: lastFailure, mayBeBilled: lastMayBeBilled }, attempt - 1, budgetMs, deadline);
			}
			let result: AttemptResult;
			try {
				result = await this.attempts.run(operation, params, options.signal, Math.max(1, deadline - Date.now()));
			} finally {
				release();
			}
			if (!result.mayBeBilled) await reserved?.giveBack();

			if (result.envelope) {
				this.limiter.onAccepted();
				return readEnvelope(this.fail, this.settings.appCode, operation, result.envelope, schema, attempt);
			}
			const failure = result.failure as GatewayFailure;
			lastFailure = failure;
			lastMayBeBilled = result.mayBeBilled;
			const wait = this.retryWait(operation, failure, result.retryable, { attempt, maxAttempts, deadline, budgetMs, minAttemptMs });
			options.logger?.debug(
				redactSecret(
					`Data Gateway: ${OPERATIONS[operation].label} attempt ${attempt} failed (${failure.kind}${failure.httpStatus ? ` ${failure.httpStatus}` : ''}); retrying in ${wait} ms`,
					this.settings.appCode,
				),
			);
			try {
				await abortableSleep(wait, options.signal);
			} catch {
				throw this.fail(operation, 'cancelled', 'the execution was cancelled');
			}
		}
	}

	/**
	 * The first attempt's turn, asked for now for a call made right after: Send asks it while the
	 * item's claim is with the store, so that the shared rate's Redis round trip and the claim's
	 * overlap (0.7 s of 10,000 sends, bench section 12). Undefined without a shared rate: a local
	 * turn costs no round trip. Its failure is the call's, as if taken there.
	 */
	firstTurn(operation: OperationName, signal?: AbortSignal): EarlyTurn | undefined {
		if (!this.limiter.shared) return undefined;
		const budgetMs = this.settings.timeoutMs;
		const given = this.takeTurn(operation, signal, { minAttemptMs: Math.min(MIN_ATTEMPT_MS, budgetMs / 4), budgetMs, attempt: 1 }).then((release) => ({ release, at: Date.now() }));
		// A turn whose call is not made is dropped, never awaited: its failure must not go unhandled.
		given.catch(() => undefined);
		return { given, drop: () => void given.then(({ release }) => release(), () => undefined) };
	}

	/** An early turn, or a fresh one in its place when it came too long before its call (earlyTurns). */
	private async usedTurn(operation: OperationName, signal: AbortSignal | undefined, turn: EarlyTurn, asked: TurnAsked): Promise<() => void> {
		const { release, at } = await turn.given;
		if (Date.now() - at <= earlyTurns.freshMs) return release;
		release();
		return await this.takeTurn(operation, signal, asked);
	}

	/**
	 * The attempt's turn from the limiter, waited for within the item's Timeout. A retry the limiter
	 * would start too late is not made: the last failure stands; a first attempt fails not sent.
	 */
	private async takeTurn(
		operation: OperationName,
		signal: AbortSignal | undefined,
		{ deadline, minAttemptMs, budgetMs, lastFailure, attempt }: TurnAsked,
	): Promise<() => void> {
		let release: () => void;
		try {
			release = this.limiter.tryAcquire() ?? (await this.limiter.acquire(signal, deadline === undefined ? Date.now() + budgetMs : deadline - minAttemptMs));
		} catch (error) {
			if (error instanceof LimiterWaitTooLong && lastFailure && deadline !== undefined) {
				throw finalFailure(this.fail, lastFailure, attempt - 1, budgetMs, deadline);
			}
			throw notSentFailure(this.fail, operation, error, signal, budgetMs);
		}
		if (signal?.aborted) {
			release();
			throw notSentFailure(this.fail, operation, undefined, signal, budgetMs);
		}
		return release;
	}

	/**
	 * After a failed attempt: tells the limiter (a 429 pauses the credential), then either the wait
	 * before the next attempt or the item's failure when no retry may be made in the time left.
	 */
	private retryWait(
		operation: OperationName,
		failure: GatewayFailure,
		retryable: boolean,
		{ attempt, maxAttempts, deadline, budgetMs, minAttemptMs }: { attempt: number; maxAttempts: number; deadline: number; budgetMs: number; minAttemptMs: number },
	): number {
		const retryAfterMs = failure.httpStatus === 429 ? failure.retryAfterMs : undefined;
		// The shared pause never outlasts what a call would wait for: one long Retry-After must not stall the credential.
		if (failure.httpStatus === 429) this.limiter.onThrottled(retryAfterMs ?? backoffDelay(attempt), this.maxWaitMs());
		else this.limiter.onAccepted();

		const left = deadline - Date.now();
		if (retryAfterMs !== undefined && retryAfterMs > Math.min(left, MAX_RETRY_AFTER_MS) && retryable) {
			throw this.fail(
				operation,
				failure.kind,
				`${failure.message}; it asked to wait ${seconds(retryAfterMs)} s (Retry-After), longer than this item may wait (Timeout ${seconds(budgetMs)} s, at most ${MAX_RETRY_AFTER_MS / 1000} s)`,
				{ httpStatus: failure.httpStatus, retryAfterMs, hint: failure.hint },
			);
		}
		const wait = retryAfterMs ?? backoffDelay(attempt);
		if (!retryable || attempt >= maxAttempts || wait + minAttemptMs > left) throw finalFailure(this.fail, failure, attempt, budgetMs, deadline);
		return wait;
	}

	/**
	 * An attempt the spending cap or a budget does not allow (or that the store could not count): the
	 * first is not sent; a retry is not made, and the item fails with the attempt before it (which
	 * still counts when its answer may have been billed).
	 */
	private overCap(
		operation: OperationName,
		{ refusal, hint }: { refusal: string; hint: string },
		last: { failure: GatewayFailure; mayBeBilled: boolean } | undefined,
		attempts: number,
		budgetMs: number,
		deadline: number,
	): GatewayFailure {
		if (!last) return this.fail(operation, 'not-sent', `not sent: ${refusal}`, { hint: `Nothing was sent or paid for this item. ${hint}` });
		const failure = finalFailure(this.fail, last.failure, attempts, budgetMs, deadline);
		return this.fail(operation, failure.kind, `${failure.message}; not tried again: ${refusal}`, {
			httpStatus: failure.httpStatus,
			gatewayCode: failure.gatewayCode,
			hint: last.mayBeBilled
				? `The gateway may have billed the attempt whose answer was lost, so it counts against the cap. Check the item before running it again. ${hint}`
				: `Other paid calls reached the limit meanwhile. ${hint}`,
		});
	}

	/** The longest a call waits between attempts, and so the longest the shared pause after a 429 lasts. */
	private maxWaitMs() {
		return Math.min(MAX_RETRY_AFTER_MS, this.settings.timeoutMs);
	}
}
