import { accountKeyOf } from '../gateway/account';
import { registerProcessState } from '../state/processState';
import type { RedisSettings } from '../store/redis/connection';
import { sharedRateFor, type SharedRate } from './sharedRate';
import { abortableSleep } from './abortableSleep';
import { decayedRate } from './learnedRate';
import { LimiterWaitTooLong } from './waitTooLong';

export { LimiterWaitTooLong } from './waitTooLong';
export { LEARNED_RATE_HALF_LIFE_MS, LEARNED_RATE_HOLD_MS } from './learnedRate';

export interface LimiterSettings {
	/** Requests in flight at once. */
	maxConcurrent: number;
	/** Upper bound on requests per second; 0 means no fixed bound (the limiter still adapts to 429). */
	maxPerSecond: number;
	/** Redis that holds the rate for every n8n process using the credential (queue mode); absent keeps it per process. */
	sharedRedis?: RedisSettings;
	/** The credential's Timeout: a Redis command of the shared limit never waits longer. */
	timeoutMs?: number;
}

/** How far below the rate that drew a 429 the limiter settles. */
const BACKOFF_FACTOR = 0.95;

/**
 * Where the limiter reads the time and waits for a start time or a pause; tests give it a clock of
 * their own. The wait for a free slot still ends by the platform's timer (takeConcurrencySlot).
 */
export interface LimiterClock {
	now(): number;
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const systemClock: LimiterClock = { now: () => Date.now(), sleep: abortableSleep };

/**
 * Concurrency plus requests-per-second for one credential. The gateway's real cap is not
 * published, so when it answers 429 the limiter pauses everyone for Retry-After and settles just
 * under the rate it had achieved, instead of hammering the appCode with rejected calls; what it
 * learned decays with LEARNED_RATE_HALF_LIFE_MS. A Retry-After longer than a call may wait (the
 * caller's cap) is no pace to learn (a quota, not a rate): it holds calls for the cap only, and a
 * call held by it starts at the hold's end or at its own deadline, whichever comes first, so the
 * calls behind it are treated alike and none fails by the package's own cap.
 */
export class GatewayLimiter {
	private settings: LimiterSettings;
	private inFlight = 0;
	private readonly waiters: Array<() => void> = [];
	/** The rate learned from the last 429 that taught one, and when (it decays from then on). */
	private learned?: { perSecond: number; at: number };
	private nextStartAt = 0;
	/** The end of a pause the gateway asked for (Retry-After within the cap): no call starts before it. */
	private pausedUntil = 0;
	/** The end of a pause the cap cut short: a call waits for it only until its own deadline. */
	private heldUntil = 0;
	private lastThrottleAt = 0;
	/** When answers other than 429 arrived in the last second, oldest first, from index `recentHead` on. */
	private recentAccepted: number[] = [];
	private recentHead = 0;
	/** When set, start times and 429 pauses are booked there instead of here (concurrency stays local). */
	shared?: SharedRate;
	private sharedThrottle?: Promise<void>;

	constructor(
		settings: LimiterSettings,
		private readonly clock: LimiterClock = systemClock,
	) {
		this.settings = settings;
	}

	update(settings: LimiterSettings) {
		this.settings = settings;
	}

	/** Current effective requests per second, or Infinity when nothing limits it. */
	get ratePerSecond(): number {
		return this.rateAt(this.clock.now());
	}

	private rateAt(now: number): number {
		const fixed = this.settings.maxPerSecond > 0 ? this.settings.maxPerSecond : Number.POSITIVE_INFINITY;
		return this.learned ? Math.min(fixed, decayedRate(this.learned.perSecond, now - this.learned.at)) : fixed;
	}

	/** How long a call without a deadline would wait now for the pause after a 429 to end; 0 when not paused. */
	get pausedForMs(): number {
		return Math.max(0, Math.max(this.pausedUntil, this.heldUntil) - this.clock.now());
	}

	/**
	 * The fast path, taken by almost every call of a batch, without a promise: the release when a
	 * slot is free and the call may start now, else undefined (then `acquire` waits).
	 */
	tryAcquire(): (() => void) | undefined {
		if (this.shared || this.inFlight >= Math.max(1, this.settings.maxConcurrent) || this.msUntilStart(this.clock.now()) > 0) return undefined;
		this.inFlight++;
		return this.releaser();
	}

	/**
	 * Waits for a slot and a start time; the caller must call the returned release exactly once.
	 * With a deadline (epoch ms), a start that would come later rejects at once with LimiterWaitTooLong.
	 */
	async acquire(signal?: AbortSignal, deadline?: number): Promise<() => void> {
		if (this.shared) return await this.acquireShared(this.shared, signal, deadline);
		const now = this.tryAcquire();
		if (now) return now;
		await this.takeConcurrencySlot(signal, deadline);
		let started = false;
		try {
			await this.waitForStartTime(signal, deadline);
			started = true;
		} finally {
			if (!started) this.releaseSlot(); // cancelled while waiting: give the slot back
		}
		return this.releaser();
	}

	private async acquireShared(shared: SharedRate, signal?: AbortSignal, deadline?: number): Promise<() => void> {
		await this.takeConcurrencySlot(signal, deadline);
		let started = false;
		try {
			await this.sharedThrottle;
			const tooLongMs = await shared.waitForStart(this.settings.maxPerSecond, signal, deadline);
			if (tooLongMs > 0) throw new LimiterWaitTooLong(tooLongMs, true, 0, deadline === undefined ? undefined : deadline - this.clock.now());
			started = true;
		} finally {
			if (!started) this.releaseSlot(); // Redis failed or the run was cancelled: give the slot back
		}
		return this.releaser();
	}

	private releaser(): () => void {
		let released = false;
		return () => {
			if (released) return;
			released = true;
			this.releaseSlot();
		};
	}

	/**
	 * The gateway said 429 and asked to wait `retryAfterMs`. Within `capMs` (what a call would wait at
	 * most): every call pauses for it, and the rate drops once per spell. Longer: calls are held for
	 * `capMs` only, and no rate is learned (the item that drew it fails; its Retry-After is a quota's).
	 */
	onThrottled(retryAfterMs: number, capMs = Number.POSITIVE_INFINITY) {
		const capped = retryAfterMs > capMs;
		const pauseMs = Math.min(retryAfterMs, capMs);
		if (this.shared) {
			// The next start waits for it; a Redis failure surfaces there, naming the field.
			this.sharedThrottle = this.shared.onThrottled(this.settings.maxPerSecond, pauseMs, capped).catch(() => undefined);
			return;
		}
		const now = this.clock.now();
		if (capped) {
			this.heldUntil = Math.max(this.heldUntil, now + pauseMs);
			return;
		}
		this.pausedUntil = Math.max(this.pausedUntil, now + pauseMs);
		if (now - this.lastThrottleAt < 1000) return;
		this.lastThrottleAt = now;
		const achieved = this.acceptedInLastSecond(now);
		const base = Math.min(this.rateAt(now), Math.max(achieved, 1));
		this.learned = { perSecond: Math.max(1, base * BACKOFF_FACTOR), at: now };
	}

	/** A call was answered without 429: counted for the rate achieved, which the next 429 learns from. */
	onAccepted() {
		const now = this.clock.now();
		this.recentAccepted.push(now);
		this.dropOlderThanOneSecond(now);
	}

	/** A slot at once, or the next one released; a wait past `deadline` rejects with LimiterWaitTooLong. */
	private async takeConcurrencySlot(signal?: AbortSignal, deadline?: number) {
		const maxConcurrent = Math.max(1, this.settings.maxConcurrent);
		if (this.inFlight < maxConcurrent) {
			this.inFlight++;
			return;
		}
		// Only a call that waits pays for a timer: the platform's, let go once nothing listens to it.
		const expiry = deadline === undefined ? undefined : AbortSignal.timeout(Math.max(1, deadline - this.clock.now()));
		await new Promise<void>((resolve, reject) => {
			const stop = (error: unknown) => {
				const index = this.waiters.indexOf(grant);
				if (index >= 0) this.waiters.splice(index, 1);
				unlisten();
				reject(error);
			};
			const onAbort = () => stop(signal?.reason ?? new Error('Cancelled'));
			const onExpiry = () => stop(new LimiterWaitTooLong(undefined, false, maxConcurrent));
			const unlisten = () => {
				signal?.removeEventListener('abort', onAbort);
				expiry?.removeEventListener('abort', onExpiry);
			};
			const grant = () => {
				unlisten();
				resolve();
			};
			if (signal?.aborted) return onAbort();
			signal?.addEventListener('abort', onAbort, { once: true });
			expiry?.addEventListener('abort', onExpiry, { once: true });
			this.waiters.push(grant);
		});
	}

	private releaseSlot() {
		const next = this.waiters.shift();
		if (next) next(); // the slot passes straight to the next waiter
		else this.inFlight--;
	}

	/**
	 * 0 when a call may start now (and books its start), otherwise how long to wait. A hold (a pause
	 * the cap cut short) ends for this call at its `deadline`, if that comes first.
	 */
	private msUntilStart(now: number, deadline?: number): number {
		const rate = this.rateAt(now);
		const held = deadline === undefined ? this.heldUntil : Math.min(this.heldUntil, deadline);
		const earliest = Math.max(this.pausedUntil, held, Number.isFinite(rate) ? this.nextStartAt : 0);
		if (earliest > now) return earliest - now;
		if (Number.isFinite(rate)) this.nextStartAt = Math.max(now, this.nextStartAt) + 1000 / rate;
		return 0;
	}

	private async waitForStartTime(signal?: AbortSignal, deadline?: number) {
		// Re-check after sleeping: a 429 elsewhere may have moved the pause or the rate.
		for (;;) {
			const now = this.clock.now();
			const wait = this.msUntilStart(now, deadline);
			if (wait <= 0) return;
			if (deadline !== undefined && now + wait > deadline) throw new LimiterWaitTooLong(wait, false, 0, deadline - now);
			await this.clock.sleep(wait, signal);
		}
	}

	private acceptedInLastSecond(now: number) {
		this.dropOlderThanOneSecond(now);
		return this.recentAccepted.length - this.recentHead;
	}

	private dropOlderThanOneSecond(now: number) {
		while (this.recentHead < this.recentAccepted.length && now - this.recentAccepted[this.recentHead] > 1000) {
			this.recentHead++;
		}
		// Compact now and then instead of shifting on every call.
		if (this.recentHead > 1024) {
			this.recentAccepted = this.recentAccepted.slice(this.recentHead);
			this.recentHead = 0;
		}
	}
}

const limiters = new Map<string, GatewayLimiter>();
registerProcessState('limiters', () => limiters.clear());

/** One limiter per credential (base URL + appCode), shared by every node and execution in the process. */
export function limiterFor(baseUrl: string, appCode: string, settings: LimiterSettings): GatewayLimiter {
	const key = accountKeyOf(baseUrl, appCode);
	let limiter = limiters.get(key);
	if (!limiter) {
		limiter = new GatewayLimiter(settings);
		limiters.set(key, limiter);
	} else {
		limiter.update(settings);
	}
	limiter.shared = sharedRateFor(settings.sharedRedis, baseUrl, appCode, settings.timeoutMs);
	return limiter;
}
