/**
 * The SQLite store's sweep (nodes/shared/store/sqliteSweep.ts) over a table the test stages: the
 * rows a pass looks at and removes, step by step, the pause after a step that removed rows, the
 * timer, passes that join or follow one another, and a store closed during a pass. Jest's fake
 * timers stand in for the clock. The sweep on a real file: test/store/sqliteStore.test.ts.
 */
import { SqliteSweeper, sweepTimes, type SweepPass, type SweepStep } from '../../nodes/shared/store/sqliteSweep';

const defaults = { ...sweepTimes };
beforeEach(() => {
	jest.useFakeTimers();
	Object.assign(sweepTimes, { everyMs: 60_000, rowsPerStep: 3, lookPerStep: 3, pauseMs: 1_000 });
});
afterEach(() => {
	jest.useRealTimers();
	Object.assign(sweepTimes, defaults);
});

/**
 * Rows 1..`count` in the order they were made; `expired` ones go when a step looks at them. A step
 * looks at up to `look` rows and removes up to `size` expired ones, stopping after the last it removes
 * when it found that many (as sqliteStore.ts sweepStep does on the file).
 */
function sweeperOver(count: number, expired: number[]) {
	const rows = Array.from({ length: count }, (_, index) => index + 1);
	const gone = new Set(expired);
	/** The `after` of each step taken. */
	const steps: number[] = [];
	const passes: SweepPass[] = [];
	const hooks: { onStep?: (after: number) => void; afterStep?: () => void } = {};
	const sweeper = new SqliteSweeper(
		async (after, size, upTo, look): Promise<SweepStep> => {
			steps.push(after);
			hooks.onStep?.(after);
			const window = rows.filter((row) => row > after && row <= upTo).slice(0, look);
			const expired = window.filter((row) => gone.has(row)).slice(0, size);
			const last = expired.length === size ? expired[size - 1] : (window.at(-1) ?? after);
			const looked = window.filter((row) => row <= last);
			for (const row of expired) rows.splice(rows.indexOf(row), 1);
			const newest = rows.at(-1) ?? 0;
			hooks.afterStep?.();
			return { looked: looked.length, removed: expired.length, last, newest, ms: 0 };
		},
		async (pass) => {
			passes.push(pass);
		},
	);
	return { sweeper, rows, gone, steps, passes, hooks };
}

const tick = async (ms: number) => await jest.advanceTimersByTimeAsync(ms);

describe('the SQLite sweep', () => {
	it('a pass starts when the file opens and walks every row, rowsPerStep at a time; it pauses only after a step that removed rows', async () => {
		const { sweeper, rows, steps, passes } = sweeperOver(9, [2, 8]);
		sweeper.start();
		await tick(0);
		// Row 2 went in the first step: the next waits the pause.
		expect(steps).toEqual([0]);
		await tick(999);
		expect(steps).toEqual([0]);
		await tick(1);
		// Rows 4 to 6 hold nothing expired: the third step follows at once, and removes row 8.
		expect(steps).toEqual([0, 3, 6]);
		expect(passes).toEqual([]);
		await tick(1_000);
		// A full step (3 rows looked at) is followed by another; the one that looks at fewer ends the pass.
		expect(steps).toEqual([0, 3, 6, 9]);
		expect(passes).toHaveLength(1);
		expect(passes[0].steps.map(({ looked, removed }) => [looked, removed])).toEqual([[3, 1], [3, 0], [3, 1], [0, 0]]);
		expect(passes[0].removed).toBe(2);
		expect(rows).toEqual([1, 3, 4, 5, 6, 7, 9]);
		sweeper.stop();
	});

	it('a pass looks only at the rows there when it began: rows made during it (a batch writing) are the next pass\'s', async () => {
		const { sweeper, gone, rows, steps, passes, hooks } = sweeperOver(8, [8]);
		// After each step, a batch adds three rows, already expired.
		hooks.afterStep = () => {
			for (const row of [1, 2, 3].map((offset) => (rows.at(-1) ?? 0) + offset)) {
				rows.push(row);
				gone.add(row);
			}
		};
		sweeper.start();
		await tick(0);
		expect(steps).toEqual([0, 3, 6]);
		expect(passes[0].steps.map(({ looked, removed }) => [looked, removed])).toEqual([[3, 0], [3, 0], [2, 1]]);
		// Rows 9 to 17, made during the pass, wait for the next one, which stops at what was there when it began.
		expect(rows).toEqual([1, 2, 3, 4, 5, 6, 7, ...Array.from({ length: 9 }, (_, index) => 9 + index)]);
		hooks.afterStep = undefined;
		// Its steps that remove rows pause 1 s each.
		await tick(64_000);
		expect(rows).toEqual([1, 2, 3, 4, 5, 6, 7]);
		sweeper.stop();
	});

	it('by default sweeps every minute, a step looking at 2,048 rows and removing 64 at most, 10 ms between steps that removed rows', async () => {
		Object.assign(sweepTimes, defaults);
		const { sweeper, gone, rows, steps, passes } = sweeperOver(3_000, Array.from({ length: 70 }, (_, index) => index + 1));
		sweeper.start();
		await tick(0);
		expect(steps).toEqual([0]);
		await tick(10);
		// The first step found 64 expired rows and stopped after them; the second looked at 2,048 rows and removed the other 6.
		expect(steps).toEqual([0, 64]);
		await tick(10);
		expect(steps).toEqual([0, 64, 2_112]);
		expect(passes[0].steps.map(({ looked, removed }) => [looked, removed])).toEqual([[64, 64], [2_048, 6], [888, 0]]);
		gone.add(3_000);
		await tick(59_979);
		expect(rows).toHaveLength(2_930);
		await tick(1);
		expect(rows).toHaveLength(2_929);
		sweeper.stop();
	});

	it('a step looks past rows that have not expired, and stops once it found rowsPerStep expired ones; the pass ends at a step that found neither limit', async () => {
		Object.assign(sweepTimes, { rowsPerStep: 2, lookPerStep: 5 });
		const { sweeper, rows, steps, passes } = sweeperOver(12, [2, 3, 4, 9]);
		sweeper.start();
		await tick(0);
		await tick(2_000);
		expect(steps).toEqual([0, 3, 8]);
		expect(passes[0].steps.map(({ looked, removed, last }) => [looked, removed, last])).toEqual([[3, 2, 3], [5, 1, 8], [4, 1, 12]]);
		expect(rows).toEqual([1, 5, 6, 7, 8, 10, 11, 12]);
		sweeper.stop();
	});

	it('runs a pass every everyMs on its timer, and stops with the store', async () => {
		const { sweeper, gone, rows, passes } = sweeperOver(2, []);
		sweeper.start();
		await tick(0);
		expect(passes).toHaveLength(1);
		gone.add(1);
		await tick(59_999);
		expect(rows).toEqual([1, 2]);
		await tick(1);
		expect(rows).toEqual([2]);
		expect(passes.map((pass) => pass.removed)).toEqual([0, 1]);
		sweeper.stop();
		gone.add(2);
		await tick(120_000);
		expect(rows).toEqual([2]);
		expect(passes).toHaveLength(2);
	});

	it('started twice, it keeps one timer: one stop ends it', async () => {
		const { sweeper, steps } = sweeperOver(1, []);
		sweeper.start();
		sweeper.start();
		await tick(0);
		expect(steps).toEqual([0]);
		await tick(60_000);
		expect(steps).toEqual([0, 0]);
		sweeper.stop();
		await tick(600_000);
		expect(steps).toEqual([0, 0]);
	});

	it('started again after a stop (the file opened again), it sweeps again', async () => {
		const { sweeper, gone, rows } = sweeperOver(2, []);
		// Stopping one never started is nothing.
		expect(() => sweeper.stop()).not.toThrow();
		sweeper.start();
		await tick(0);
		sweeper.stop();
		gone.add(2);
		sweeper.start();
		await tick(0);
		expect(rows).toEqual([1]);
		sweeper.stop();
	});

	it('a pass asked for while one runs joins it; one asked for after it is a new pass', async () => {
		const { sweeper, steps, passes } = sweeperOver(4, [1]);
		sweeper.start();
		await tick(0);
		const joined = sweeper.pass();
		await tick(1_000);
		const first = await joined;
		expect(steps).toEqual([0, 3]);
		expect(passes).toEqual([first]);
		const [a, b] = await Promise.all([sweeper.pass(), sweeper.pass()]);
		expect(a).toBe(b);
		expect(a).not.toBe(first);
		expect(steps).toEqual([0, 3, 0, 4]);
		expect(passes).toHaveLength(2);
		sweeper.stop();
	});

	it('a fresh pass waits for the one running and then walks the rows again (it may have looked at them before they expired)', async () => {
		const { sweeper, gone, rows, steps } = sweeperOver(7, [2]);
		sweeper.start();
		await tick(0);
		expect(steps).toEqual([0]);
		// Row 1 expires while the running pass pauses after its first step, which looked at it.
		gone.add(1);
		const fresh = sweeper.freshPass();
		await tick(2_000);
		const pass = await fresh;
		expect(rows).toEqual([3, 4, 5, 6, 7]);
		expect(pass.removed).toBe(1);
		expect(steps).toEqual([0, 3, 6, 0, 4, 7]);
		// With none running it is a pass like any other.
		gone.add(3);
		const idle = sweeper.freshPass();
		await tick(1_000);
		expect((await idle).removed).toBe(1);
		sweeper.stop();
	});

	it('a store closed during a pass stops it after the step it is on, with nothing done after the pass', async () => {
		const { sweeper, steps, passes, hooks } = sweeperOver(9, []);
		hooks.onStep = () => sweeper.stop();
		sweeper.start();
		await tick(0);
		const pass = await sweeper.pass();
		expect(steps).toEqual([0, 0]);
		expect(pass.steps).toHaveLength(1);
		expect(passes).toEqual([]);
	});

	it('a failed pass (the file busy) is the next tick\'s to do, without an unhandled rejection', async () => {
		const { sweeper, gone, rows, hooks } = sweeperOver(2, [1]);
		let failures = 1;
		hooks.onStep = () => {
			if (failures-- > 0) throw new Error('database is locked');
		};
		sweeper.start();
		await tick(0);
		expect(rows).toEqual([1, 2]);
		gone.add(2);
		await tick(60_000);
		expect(rows).toEqual([]);
		sweeper.stop();
	});
});
