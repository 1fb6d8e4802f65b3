/**
 * An attempt's deadline (transport/deadline.ts) on jest's fake clock: its one watch, the deadline to
 * the millisecond at the watch's ticks, a cancelled execution, and the watch stopping when no attempt
 * is in flight. test/transport/bounds.test.ts checks the same bound against real servers.
 */
import { AttemptDeadline } from '../../nodes/shared/transport/deadline';

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => {
	// Every test clears its attempts: one more tick stops the module's watch before its clock goes.
	jest.advanceTimersByTime(50);
	jest.useRealTimers();
});

/** An attempt with its abort recorded: the reasons it was ended with, in order. */
function attempt(ms: number, cancel?: AbortSignal) {
	const deadline = new AttemptDeadline(ms, cancel);
	const reasons: string[] = [];
	deadline.attach((reason) => reasons.push(reason.message));
	return { deadline, reasons };
}

describe('an attempt deadline', () => {
	it('ends the attempt at its deadline, not a tick before, and once only', () => {
		const { deadline, reasons } = attempt(1000);
		jest.advanceTimersByTime(999);
		expect(reasons).toEqual([]);
		expect(deadline.expired).toBe(false);
		jest.advanceTimersByTime(1);
		expect(reasons).toEqual(['the attempt reached its deadline']);
		expect(deadline.expired).toBe(true);
		jest.advanceTimersByTime(500);
		deadline.check(Date.now());
		expect(reasons).toHaveLength(1);
		deadline.clear();
	});

	it('ends the attempt when the execution is cancelled, which is not a deadline', () => {
		const cancel = new AbortController();
		const { deadline, reasons } = attempt(60_000, cancel.signal);
		jest.advanceTimersByTime(100);
		expect(reasons).toEqual([]);
		cancel.abort();
		jest.advanceTimersByTime(50);
		expect(reasons).toEqual(['the execution was cancelled']);
		expect(deadline.expired).toBe(false);
		deadline.clear();
	});

	it('ends a way to end the exchange attached after the attempt ended, at once', () => {
		const deadline = new AttemptDeadline(10, undefined);
		jest.advanceTimersByTime(50);
		const reasons: string[] = [];
		deadline.attach((reason) => reasons.push(reason.message));
		expect(reasons).toEqual(['the attempt reached its deadline']);
		const cancelled = new AbortController();
		cancelled.abort();
		const other = attempt(60_000, cancelled.signal);
		// Attached to an execution already cancelled: ended at once (the end may be asked twice: the pool's end keeps the first).
		expect([...new Set(other.reasons)]).toEqual(['the execution was cancelled']);
		deadline.clear();
		other.deadline.clear();
	});

	it('leaves a cleared attempt alone', () => {
		const { deadline, reasons } = attempt(100);
		deadline.clear();
		jest.advanceTimersByTime(1000);
		deadline.check(Date.now());
		expect(reasons).toEqual([]);
	});

	it('keeps one watch for all attempts in flight, stopped once none is left and started again by the next', () => {
		const first = attempt(1000);
		const second = attempt(2000);
		expect(jest.getTimerCount()).toBe(1);
		first.deadline.clear();
		second.deadline.clear();
		jest.advanceTimersByTime(50);
		expect(jest.getTimerCount()).toBe(0);
		const third = attempt(100);
		expect(jest.getTimerCount()).toBe(1);
		jest.advanceTimersByTime(100);
		expect(third.reasons).toEqual(['the attempt reached its deadline']);
		third.deadline.clear();
		jest.advanceTimersByTime(50);
		expect(jest.getTimerCount()).toBe(0);
	});
});
