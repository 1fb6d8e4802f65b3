/**
 * The credential's limiter on a clock the test moves (test/transport/fakeClock.ts): pauses after a
 * 429, the pace it learns and how that pace decays, with no real time in the way. Issue 33 item 12
 * and issue 36 item 2.
 */
import { GatewayLimiter, LEARNED_RATE_HALF_LIFE_MS, LEARNED_RATE_HOLD_MS, LimiterWaitTooLong } from '../../nodes/shared/limits/limiter';
import { failureMaker, notSentFailure } from '../../nodes/shared/transport/failure';
import { FakeClock } from './fakeClock';

const TIMEOUT_MS = 5000;

type Turn = { startedAt: number; release: () => void } | { failed: LimiterWaitTooLong };

/** One item's first turn, as GatewayClient.call asks for it: at once, or waiting until its Timeout at most. */
function turn(limiter: GatewayLimiter, clock: FakeClock, timeoutMs = TIMEOUT_MS): Promise<Turn> {
	const now = limiter.tryAcquire();
	const acquired = now ? Promise.resolve(now) : limiter.acquire(undefined, clock.now() + timeoutMs);
	return acquired.then(
		(release) => ({ startedAt: clock.now(), release }),
		(error: LimiterWaitTooLong) => ({ failed: error }),
	);
}

function startedAt(result: Turn): number | string {
	return 'startedAt' in result ? result.startedAt : `failed: ${result.failed.message}`;
}

/** `count` answers without 429 arriving now. */
function accepted(limiter: GatewayLimiter, count: number) {
	for (let call = 0; call < count; call++) limiter.onAccepted();
}

describe('a pause after a 429 (issue 33 item 12)', () => {
	it('a Retry-After of an hour, capped at the Timeout: the calls behind it all start when it ends, none fails', async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 }, clock);
		const began = clock.now();
		// Node 1: three lookups at once; the first answer is a 429 asking for an hour, the other two are answered.
		const node1 = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()];
		await clock.advance(50);
		node1[0]?.();
		limiter.onThrottled(3_600_000, TIMEOUT_MS); // as GatewayClient reports it: the Retry-After, and the cap
		node1[1]?.();
		limiter.onAccepted();
		node1[2]?.();
		limiter.onAccepted();
		// Node 2 starts at once: two lookups, Timeout 5 s.
		await clock.advance(20);
		const node2 = [turn(limiter, clock), turn(limiter, clock)];
		await clock.advance(20_000);
		const results = await Promise.all(node2);
		expect(results.map(startedAt)).toEqual([began + 50 + TIMEOUT_MS, began + 50 + TIMEOUT_MS]);
		// That 429 was a quota's, not a pace: nothing was learned from it.
		expect(limiter.ratePerSecond).toBe(Number.POSITIVE_INFINITY);
	});

	it('a call already waiting when the pause began starts at its own deadline, not failed by the milliseconds between', async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 1, maxPerSecond: 0 }, clock);
		const began = clock.now();
		const inFlight = limiter.tryAcquire();
		// Waits for the one slot from `began`, so may wait until began + 5 s.
		const waiting = turn(limiter, clock);
		await clock.advance(30);
		// The call in flight draws the 429 30 ms later: the pause, capped at the Timeout, ends at began + 5.03 s.
		inFlight?.();
		limiter.onThrottled(3_600_000, TIMEOUT_MS);
		await clock.advance(10_000);
		expect(startedAt(await waiting)).toBe(began + TIMEOUT_MS);
	});

	it('a pause the gateway asked for within the Timeout holds every call for all of it', async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 }, clock);
		const began = clock.now();
		accepted(limiter, 20);
		limiter.onThrottled(3000, TIMEOUT_MS);
		const waiting = turn(limiter, clock);
		await clock.advance(10_000);
		expect(startedAt(await waiting)).toBe(began + 3000);
		// A call whose Timeout the pause outlasts is refused at once, not sent.
		limiter.onThrottled(3000, TIMEOUT_MS);
		const refused = await turn(limiter, clock, 1000);
		expect('failed' in refused && refused.failed.waitMs).toBe(3000);
	});

	it('a call that waited and then finds a longer wait says how much of its wait was left, which is true', async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 }, clock);
		// A lone 429 asking for 4.5 s: the pace learned is the least, one call a second.
		limiter.onThrottled(4500, TIMEOUT_MS);
		const calls = [turn(limiter, clock), turn(limiter, clock)];
		await clock.advance(10_000);
		const [first, second] = await Promise.all(calls);
		expect('startedAt' in first).toBe(true);
		if (!('failed' in second)) throw new Error('expected the second call to be refused');
		expect(second.failed.leftMs).toBe(500);
		const failure = notSentFailure(failureMaker('secret'), 'telephoneIdentify', second.failed, undefined, TIMEOUT_MS);
		expect(failure.message).toBe(
			'not sent: calls with this credential are held back for another 1 s, longer than the 0.5 s left of the 5 s this item may wait for its turn (Timeout 5 s)',
		);
	});

	it('a wait longer than the whole Timeout says so, rounded up', async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 }, clock);
		limiter.onThrottled(5_020, 60_000);
		const refused = await turn(limiter, clock);
		if (!('failed' in refused)) throw new Error('expected the call to be refused');
		expect(notSentFailure(failureMaker('secret'), 'telephoneIdentify', refused.failed, undefined, TIMEOUT_MS).message).toBe(
			'not sent: calls with this credential are held back for another 5.1 s, longer than this item may wait (Timeout 5 s)',
		);
	});
});

describe('the pace learned from a 429 decays by the clock (issue 36 item 2)', () => {
	it(`holds ${LEARNED_RATE_HOLD_MS / 1000} s, then doubles every ${LEARNED_RATE_HALF_LIFE_MS / 1000} s, idle or not, and a new 429 teaches it again`, async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 }, clock);
		accepted(limiter, 40);
		limiter.onThrottled(1000, TIMEOUT_MS);
		expect(limiter.ratePerSecond).toBeCloseTo(38, 6);
		// Held: a run busy at a 40 a second cap does not climb back to it within seconds.
		await clock.advance(LEARNED_RATE_HOLD_MS);
		expect(limiter.ratePerSecond).toBeCloseTo(38, 6);
		// Idle: no call is made, yet the next read finds the rate grown by the time passed.
		await clock.advance(LEARNED_RATE_HALF_LIFE_MS);
		expect(limiter.ratePerSecond).toBeCloseTo(76, 6);
		await clock.advance(LEARNED_RATE_HALF_LIFE_MS / 2);
		expect(limiter.ratePerSecond).toBeCloseTo(76 * Math.SQRT2, 6);
		// A 429 now learns from the rate achieved in the last second, not from what it had learned before.
		await clock.advance(24 * 3_600_000);
		accepted(limiter, 10);
		limiter.onThrottled(1000, TIMEOUT_MS);
		expect(limiter.ratePerSecond).toBeCloseTo(9.5, 6);
	});

	it('an idle process starts near full speed: ten minutes after a 429 that taught 1 call a second, 10 calls start at once', async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 }, clock);
		limiter.onThrottled(500, TIMEOUT_MS);
		expect(limiter.ratePerSecond).toBe(1);
		await clock.advance(10 * 60_000);
		const began = clock.now();
		const calls = Array.from({ length: 10 }, () => turn(limiter, clock));
		await clock.advance(20_000);
		// 2^10 = 1,024 a second: 10 calls within about 10 ms, where a rate never forgotten would take 9 s.
		for (const call of await Promise.all(calls)) expect(startedAt(call)).toBeLessThanOrEqual(began + 10);
	});

	it('never above Max Requests per Second, however far it has decayed', async () => {
		const clock = new FakeClock();
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 20 }, clock);
		accepted(limiter, 10);
		limiter.onThrottled(0, TIMEOUT_MS);
		expect(limiter.ratePerSecond).toBeCloseTo(9.5, 6);
		await clock.advance(60 * 60_000);
		expect(limiter.ratePerSecond).toBe(20);
	});
});
