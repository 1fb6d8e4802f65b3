/**
 * Section 11, a month in a day (issue 36): 30 simulated days of a daily job through the built
 * nodes in n8n-core's engine, on the SQLite store, in a process of its own (bench/monthRun.ts);
 * the emulator in its own process at 0 ms latency. Per day the file's size, the time per send and
 * the sweep's longest pause, against three targets.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from '../scripts/n8n-runtime';
import { figureRow, type Figure } from './figure';
import { startEmulatorProcess, type EmulatorProcess } from './gateway';
import { MONTH_CHECKS, MONTH_DAYS, MONTH_LOOKUPS, MONTH_OPTED_OUT, MONTH_SEND_BATCH, MONTH_SENDS, ownMs, type MonthDay, type MonthRun, type SweepSlice } from './monthShape';
import { nodeWithSqlite } from './records';
import { spliceSection } from './report';

export const MONTH_START = '<!-- month -->';
export const MONTH_END = '<!-- /month -->';

const SIZE_LIMIT = 1.2;
const SEND_LIMIT = 1.2;
const PAUSE_LIMIT_MS = 20;
/** Days on each side of the time-per-send comparison: one day's figure can lose the shared CPU. */
const EDGE_DAYS = 3;

export function monthBench(emulator: EmulatorProcess, days = MONTH_DAYS): MonthRun {
	const folder = mkdtempSync(join(tmpdir(), 'dgw-bench-month-'));
	const env: NodeJS.ProcessEnv = { ...process.env, N8N_USER_FOLDER: folder, DATA_GATEWAY_STORE_FILE: join(folder, 'month.sqlite') };
	delete env.EXECUTIONS_MODE;
	try {
		const input = JSON.stringify({ emulatorUrl: emulator.url, demo: emulator.demo, days });
		const child = spawnSync(nodeWithSqlite(), ['--import', 'tsx', join(REPO_ROOT, 'bench', 'monthRun.ts'), input], {
			cwd: REPO_ROOT,
			env,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'inherit'],
			maxBuffer: 16 * 1024 * 1024,
		});
		if (child.status !== 0) throw new Error(`the month run failed (exit ${child.status})`);
		return JSON.parse(child.stdout.trim().split('\n').pop() as string) as MonthRun;
	} finally {
		rmSync(folder, { recursive: true, force: true });
	}
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const kb = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString('en')} KB`;
const ms = (value: number, digits = 1) => `${value.toFixed(digits)} ms`;
const longestBy = (slices: SweepSlice[], measure: (slice: SweepSlice) => number) => slices.reduce((most, slice) => (measure(slice) > measure(most) ? slice : most));
const wall = (slice: SweepSlice) => slice.wallMs;
const sliceText = (slice: SweepSlice) => `${ms(slice.wallMs)} (on a CPU ${ms(slice.cpuMs)}, waiting for one ${ms(slice.queuedMs)})`;

/** The three figures: size after the last night ÷ after the third, time per send at the end ÷ the start, the sweep's longest slice. */
export function monthFigures(run: MonthRun): Figure[] {
	const { days } = run;
	const last = days[days.length - 1];
	const third = days[Math.min(2, days.length - 1)];
	const sizeRatio = last.bytesAfterNight / third.bytesAfterNight;
	const jobSizes = days.slice(2).map((day) => day.bytesAfterJob);
	const first = days.slice(0, EDGE_DAYS);
	const end = days.slice(-EDGE_DAYS);
	const perSend = (group: MonthDay[]) => median(group.map((day) => day.msPerSend));
	const cpuPerSend = (group: MonthDay[]) => median(group.map((day) => day.cpuMsPerSend));
	const sendRatio = perSend(end) / perSend(first);
	const longest = longestBy(days.flatMap((day) => [day.passSlice, day.timerSlice]), wall);
	const own = longestBy(days.flatMap((day) => [day.passOwnSlice, day.timerOwnSlice]), ownMs);
	const delay = Math.max(...days.map((day) => day.passDelayMs));
	const failed = days.reduce((sum, day) => sum + day.failed, 0);
	const name = `11. A month in a day (${days.length} simulated days, SQLite store)`;
	return [
		{
			name: `${name}: store file size`,
			measured: `file and WAL after night ${last.day} ${kb(last.bytesAfterNight)}, after night ${third.day} ${kb(third.bytesAfterNight)}; right after the day's job (the WAL as the day's writes left it, up to 16 MB) ${kb(Math.min(...jobSizes))}–${kb(Math.max(...jobSizes))} from day ${third.day} on; ${failed} items failed in the month`,
			target: `after night ${last.day} ≤ ${SIZE_LIMIT} × after night ${third.day}`,
			ratio: sizeRatio,
			limit: SIZE_LIMIT,
			pass: sizeRatio <= SIZE_LIMIT && failed === 0,
			note: `${sizeRatio.toFixed(2)} ×`,
		},
		{
			name: `${name}: time per send`,
			measured: `Send node time per send, median of days ${end[0].day}–${last.day} ${ms(perSend(end), 3)} against days 1–${first.length} ${ms(perSend(first), 3)} (day ${last.day} ${ms(last.msPerSend, 3)}, day 1 ${ms(days[0].msPerSend, 3)}: ${(last.msPerSend / days[0].msPerSend).toFixed(2)} ×); CPU per send ${ms(cpuPerSend(first), 3)} → ${ms(cpuPerSend(end), 3)} (${(cpuPerSend(end) / cpuPerSend(first)).toFixed(2)} ×)`,
			target: `last ${EDGE_DAYS} days ≤ ${SEND_LIMIT} × the first ${EDGE_DAYS} (medians)`,
			ratio: sendRatio,
			limit: SEND_LIMIT,
			pass: sendRatio <= SEND_LIMIT,
			note: `${sendRatio.toFixed(2)} ×`,
		},
		{
			name: `${name}: longest sweep pause`,
			measured: `longest synchronous slice of a sweep pass by wall time ${sliceText(longest)}; longest without the wait for a CPU ${ms(ownMs(own))} (a slice of ${sliceText(own)}); longest event-loop delay while the passes ran ${ms(delay, 0)}`,
			target: `≤ ${PAUSE_LIMIT_MS} ms, wall time without the wait for a CPU`,
			ratio: ownMs(own) / PAUSE_LIMIT_MS,
			limit: 1,
			pass: ownMs(own) <= PAUSE_LIMIT_MS,
			note: `${ms(ownMs(own))}; ${ms(longest.wallMs)} with the wait`,
		},
	];
}

function dayRow(day: MonthDay): string {
	const slice = longestBy([day.passSlice, day.timerSlice], wall);
	const own = longestBy([day.passOwnSlice, day.timerOwnSlice], ownMs);
	return `| ${day.day} | ${kb(day.bytesAfterJob)} | ${kb(day.fileBytesAfterJob)} | ${kb(day.bytesAfterNight)} | ${day.msPerSend.toFixed(3)} | ${day.cpuMsPerSend.toFixed(3)} | ${day.nightRows.toLocaleString('en')} in ${(day.nightMs / 1000).toFixed(1)} s | ${day.passRows.toLocaleString('en')} | ${slice.wallMs.toFixed(1)} (${slice.cpuMs.toFixed(1)}, ${slice.queuedMs.toFixed(1)}) | ${ownMs(own).toFixed(1)} | ${day.passDelayMs.toFixed(0)} | ${day.sent} sent, ${day.paidLookups} paid, ${day.reused} reused, ${day.optedOutFound} listed, ${day.failed} failed | ${day.load.toFixed(1)} |`;
}

export function monthSection(run: MonthRun, stamp: string): string {
	return `${MONTH_START}
## 11. A month in a day (${stamp})

${run.days.length} simulated days of a daily job through the built nodes in n8n-core's WorkflowExecute, on the SQLite store (the default of n8n 2.x without Redis), in a fresh process on ${run.node}; the emulator in its own process at 0 ms latency. The store's clock (the store's injectable clock, no sleeping) moves through each day's job and on to the next day's 10:00; a sweep pass runs at 10:20, 10:30, 14:00 and the next day's 10:00 (the night's pass), what the store's minute timer would have done meanwhile (its own timer runs too, every minute of real time). A day, China time: Send at 10:00, 10:05, 10:10 and 10:15 (${MONTH_SEND_BATCH} numbers each, ${MONTH_SENDS.toLocaleString('en')} a day, none texted before, the node's defaults); Opt-Out Check of ${MONTH_CHECKS} numbers at 10:20 (${MONTH_CHECKS / 5} of the ${MONTH_OPTED_OUT} on the list); ${MONTH_LOOKUPS.toLocaleString('en')} violation queries with Reuse Answers For 24 h, half at 10:30 (of which ${MONTH_LOOKUPS / 10} asked yesterday at 10:30, 24 h old: expired and paid again, and ${MONTH_LOOKUPS / 10} asked yesterday at 14:00: reused) and half at 14:00 (${MONTH_LOOKUPS / 10} of them asked that morning: reused). Whole run ${run.totalSeconds.toFixed(0)} s.

**Size** = the file and its WAL after the night's pass (the next day's 10:00), which ends by emptying the WAL when it removed rows; beside it the size right after the day's job, when the WAL holds what the day's last writes left (the store copies it into the file from a thread of its own; while writes come faster than the copies it grows, up to 4,000 pages, 16 MB, at which the writing connection copies it itself, and the thread cuts it back to 4 MB when it next starts it anew). **Time per send** = the Send node's execution time as n8n records it ÷ its ${MONTH_SEND_BATCH} sends, median of the day's 4 executions, and the run process's CPU time in them ÷ the sends (the emulator runs elsewhere); the machine is shared by other work, so single days are noisy: the target compares the medians of the first and the last ${EDGE_DAYS} days. **Sweep pause** = the longest synchronous slice of a sweep pass (a step's transaction, or a step giving free pages back to the disk), which holds n8n's event loop for all its time, over the passes this run asked for and the store's own timer passes: wall time, and of it the main thread's time on a CPU and waiting for one while other processes ran (Linux's schedstat for the thread); the rest of the wall time it was blocked (disk, the file's lock). The target takes the wall time without the wait for a CPU, the part the store's own work decides on a shared machine; beside it the longest event-loop delay while the passes ran (\`perf_hooks.monitorEventLoopDelay\`, 1 ms resolution), waits included.

| measurement | measured | target | result |
| --- | --- | --- | --- |
${monthFigures(run).map(figureRow).join('\n')}

| day | after the job: file + WAL | file | after the night's pass: file + WAL | ms per send | CPU ms per send | night's pass: rows removed | rows removed, all passes | longest sweep slice: wall ms (on a CPU, waiting for one) | longest without the wait, ms | longest event-loop delay in passes, ms | the day's items | load average |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${run.days.map(dayRow).join('\n')}
${MONTH_END}`;
}

/** BENCH_ONLY=month: only this section, spliced into the existing report. */
export async function monthOnly(stamp: string): Promise<void> {
	const emulator = await startEmulatorProcess();
	try {
		const days = Number(process.env.BENCH_MONTH_DAYS ?? MONTH_DAYS);
		const run = monthBench(emulator, days);
		for (const figure of monthFigures(run)) console.log(figure);
		const path = join(REPO_ROOT, 'bench', 'results', 'REPORT.md');
		writeFileSync(path, spliceSection(readFileSync(path, 'utf8'), monthSection(run, stamp), MONTH_START, MONTH_END));
		console.log('Report: bench/results/REPORT.md');
	} finally {
		await emulator.stop();
	}
}
