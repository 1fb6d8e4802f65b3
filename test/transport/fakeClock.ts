import type { LimiterClock } from '../../nodes/shared/limits/limiter';

/**
 * A limiter clock that moves only when the test moves it: sleepers wake in time order as `advance`
 * passes their time, and each woken sleeper's code runs (to its next sleep) before the clock moves on.
 */
export class FakeClock implements LimiterClock {
	private time: number;
	private sleepers: Array<{ at: number; wake: () => void }> = [];

	constructor(start = Date.UTC(2026, 10, 26, 8)) {
		this.time = start;
	}

	now = (): number => this.time;

	sleep = async (ms: number): Promise<void> => {
		await new Promise<void>((wake) => this.sleepers.push({ at: this.time + ms, wake }));
	};

	/** Moves the clock `ms` ahead, waking every sleeper due on the way at its own time. */
	async advance(ms: number): Promise<void> {
		const until = this.time + ms;
		await settle();
		for (;;) {
			this.sleepers.sort((a, b) => a.at - b.at);
			const next = this.sleepers[0];
			if (!next || next.at > until) break;
			this.sleepers.shift();
			this.time = Math.max(this.time, next.at);
			next.wake();
			await settle();
		}
		this.time = until;
	}
}

/** Lets every promise already resolved run its continuations (a few turns of the event loop). */
export async function settle(): Promise<void> {
	for (let turn = 0; turn < 5; turn++) await new Promise((done) => setImmediate(done));
}
