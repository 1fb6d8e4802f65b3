import { accountKeyOf } from '../gateway/account';
import type { RedisSettings } from '../store/redis/connection';
import { sharedRateFor, type SharedRate } from './sharedRate';
import { abortableSleep } from './abortableSleep';

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
/** After a quiet spell of this length without 429, the adaptive rate creeps up again. */
const PROBE_INTERVAL_MS = 5000;
const PROBE_STEP = 1.05;

/** A wait in words: "3 s", "4.5 min", "23.1 days". */
function describeWait(ms: number): string {
	const units: Array<[number, string]> = [
		[86_400_000, 'days'],
		[3_600_000, 'h'],
		[60_000, 'min'],
	];
	for (const [size, unit] of units) if (ms >= 2 * size) return `${Math.round((ms / size) * 10) / 10} ${unit}`;
	return `${Math.ceil(ms / 1000)} s`;
}

/**
 * Thrown by `acquire` when the start would come after the caller's deadline (it does not wait in
 * vain), or when no concurrency slot came free by then.
 */
export class LimiterWaitTooLong extends Error {
	constructor(
		/** The wait still ahead; undefined when it is not known (a slot did not come free). */
		readonly waitMs: number | undefined,
		/** The wait was booked in the shared Redis (limits/sharedRate.ts) rather than in this process. */
		readonly shared = false,
		maxConcurrent = 0,
	) {
		super(
			waitMs === undefined
				? `${maxConcurrent === 1 ? 'the one call allowed at a time' : `all ${maxConcurrent} calls allowed at once`} with this credential stayed busy`
				: `calls with this credential are held back for another ${describeWait(waitMs)}${shared ? ' by the rate shared through Redis' : ''}`,
		);
		this.name = 'LimiterWaitTooLong';
	}
}

/**
 * Concurrency plus requests-per-second for one credential. The gateway's real cap is not
 * published, so when it answers 429 the limiter pauses everyone for Retry-After (capped by the
 * caller at what the transport would wait) and settles just under the rate it had achieved,
 * instead of hammering the appCode with rejected calls.
 */
export class GatewayLimiter {
	private settings: LimiterSettings;
	private inFlight = 0;
	private readonly waiters: Array<() => void> = [];
	/** Adaptive rate learned from 429 answers; Infinity until the first one. */
	private learnedPerSecond = Number.POSITIVE_INFINITY;
	private nextStartAt = 0;
	private pausedUntil = 0;
	private lastThrottleAt = 0;
	private lastProbeAt = 0;
	/** When answers other than 429 arrived in the last second, oldest first, from index `recentHead` on. */
	private recentAccepted: number[] = [];
	private recentHead = 0;
	/** When set, start times and 429 pauses are booked there instead of here (concurrency stays local). */
	shared?: SharedRate;
	private sharedThrottle?: Promise<void>;

	constructor(settings: LimiterSettings) {
		this.settings = settings;
	}

	update(settings: LimiterSettings) {
		this.settings = settings;
	}

	/** Current effective requests per second, or Infinity when nothing limits it. */
	get ratePerSecond(): number {
		const fixed = this.settings.maxPerSecond > 0 ? this.settings.maxPerSecond : Number.POSITIVE_INFINITY;
		return Math.min(fixed, this.learnedPerSecond);
	}

	/** How long a call would wait now for the pause after a 429 to end; 0 when not paused. */
	get pausedForMs(): number {
		return Math.max(0, this.pausedUntil - Date.now());
	}

	/**
	 * The fast path, taken by almost every call of a batch, without a promise: the release when a
	 * slot is free and the call may start now, else undefined (then `acquire` waits).
	 */
	tryAcquire(): (() => void) | undefined {
		if (this.shared || this.inFlight >= Math.max(1, this.settings.maxConcurrent) || this.msUntilStart() > 0) return undefined;
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
			if (tooLongMs > 0) throw new LimiterWaitTooLong(tooLongMs, true);
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

	/** The gateway said 429: pause all requests for `pauseMs` and lower the rate once per spell. */
	onThrottled(pauseMs: number) {
		if (this.shared) {
			// The next start waits for it; a Redis failure surfaces there, naming the field.
			this.sharedThrottle = this.shared.onThrottled(this.settings.maxPerSecond, pauseMs).catch(() => undefined);
			return;
		}
		const now = Date.now();
		this.pausedUntil = Math.max(this.pausedUntil, now + pauseMs);
		if (now - this.lastThrottleAt < 1000) return;
		this.lastThrottleAt = now;
		this.lastProbeAt = now;
		const achieved = this.acceptedInLastSecond(now);
		const base = Math.min(this.ratePerSecond, Math.max(achieved, 1));
		this.learnedPerSecond = Math.max(1, base * BACKOFF_FACTOR);
	}

	/** A call was answered without 429: after a quiet spell, probe a little higher. */
	onAccepted() {
		const now = Date.now();
		this.recentAccepted.push(now);
		this.dropOlderThanOneSecond(now);
		if (!Number.isFinite(this.learnedPerSecond)) return;
		if (now - this.lastProbeAt < PROBE_INTERVAL_MS) return;
		this.lastProbeAt = now;
		this.learnedPerSecond *= PROBE_STEP;
	}

	/** A slot at once, or the next one released; a wait past `deadline` rejects with LimiterWaitTooLong. */
	private async takeConcurrencySlot(signal?: AbortSignal, deadline?: number) {
		const maxConcurrent = Math.max(1, this.settings.maxConcurrent);
		if (this.inFlight < maxConcurrent) {
			this.inFlight++;
			return;
		}
		// Only a call that waits pays for a timer: the platform's, let go once nothing listens to it.
		const expiry = deadline === undefined ? undefined : AbortSignal.timeout(Math.max(1, deadline - Date.now()));
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

	/** 0 when a call may start now (and books its start), otherwise how long to wait. */
	private msUntilStart(): number {
		const now = Date.now();
		const rate = this.ratePerSecond;
		const earliest = Math.max(this.pausedUntil, Number.isFinite(rate) ? this.nextStartAt : 0);
		if (earliest > now) return earliest - now;
		if (Number.isFinite(rate)) this.nextStartAt = Math.max(now, this.nextStartAt) + 1000 / rate;
		return 0;
	}

	private async waitForStartTime(signal?: AbortSignal, deadline?: number) {
		// Re-check after sleeping: a 429 elsewhere may have moved the pause or the rate.
		for (let wait = this.msUntilStart(); wait > 0; wait = this.msUntilStart()) {
			if (deadline !== undefined && Date.now() + wait > deadline) throw new LimiterWaitTooLong(wait);
			await abortableSleep(wait, signal);
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
