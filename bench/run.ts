/**
 * `npm run bench`: throughput, rate-cap adaptation, a side-by-side with n8n's HTTP Request node
 * in real n8n, per-item overhead against a bare undici loop, peak memory, and real n8n in queue
 * mode (2 workers sharing a rate cap; CPU per item beside the HTTP Request node). Prints a table and
 * writes bench/results/REPORT.md with bench/results/chart.svg. BENCH_ONLY=queue runs the queue-mode
 * part alone and puts its section into the existing report; BENCH_ONLY=sendAndCheck does the same
 * for Send and Check Delivery over a batch (bench/sendAndCheck.ts); BENCH_ONLY=records likewise the SMS
 * send records at volume (bench/records.ts), BENCH_ONLY=reuse Reuse Answers For across executions (bench/reuse.ts),
 * BENCH_ONLY=month a month of a daily job on the SQLite store (bench/month.ts; BENCH_MONTH_DAYS=3 for fewer
 * days), BENCH_ONLY=bulkSms Bulk SMS in real n8n (bench/bulkSms.ts). BENCH_ONLY=throughput,overhead,memory prints those figures only; BENCH_ONLY=instructions counts section 4 in instructions under valgrind (bench/instructions.ts). The report's text and chart are written by bench/report.ts; `npm run bench:profile` (bench/profile.ts)
 * shows where section 4's CPU goes.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { forgetLimiters } from '../dist/nodes/shared/testing.js';
import { REPO_ROOT } from '../scripts/n8n-runtime';
import { bareLoop } from './bareLoop';
import { BULK_END, BULK_REPEATS, BULK_START, bulkFigure, bulkSection, bulkSmsBench, BULK_SIZES, type BulkRun, type BulkStore } from './bulkSms';
import type { Figure } from './figure';
import { startEmulatorProcess, type EmulatorProcess } from './gateway';
import { instructionCounts } from './instructions';
import { monthBench, monthFigures, monthOnly, monthSection } from './month';
import { phones, plates } from './inputs';
import { runLookups } from './lookups';
import type { MemoryRun } from './memory';
import { queueMode, type QueueModeResult } from './queueMode';
import { recordsBench, recordsOnly, type StoreRun } from './records';
import { REUSE_END, REUSE_START, reuseBench, reuseSection } from './reuse';
import {
	machineLine,
	queueSection,
	RESULTS,
	SEND_AND_CHECK_END,
	SEND_AND_CHECK_START,
	sendAndCheckSection,
	sideBySideTable,
	spliceSection,
	writeReport,
} from './report';
import { sendAndCheckBench, type SendAndCheckResult } from './sendAndCheck';
import { sideBySide, type SideBySideRow } from './sideBySide';

/**
 * Runs one section as a freshly started n8n would, without the limiters earlier sections left in
 * this process: sections 2, 8 and 10 use one credential, and the rate section 2 learned from its
 * 40 req/s cap would pace the calls of the later ones, which then measure section 2's after-effect
 * (issue 36). What a limiter learns is forgotten over minutes in the product too (limits/learnedRate.ts).
 */
function section<T>(run: () => T): T {
	forgetLimiters();
	return run();
}

async function throughput(emulator: EmulatorProcess): Promise<Figure> {
	const credentials = { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxConcurrent: 10 };
	// A warm-up first, as in section 4: a process's first run also compiles n8n's engine and the package.
	await emulator.reset();
	await runLookups('telephone', phones(1100).slice(1000), credentials);
	await emulator.reset();
	await emulator.setFaults({ latencyMs: 50 });
	const run = await runLookups('telephone', phones(1000), credentials);
	const firstCallAt = Math.min(...(await emulator.ledger()).calls.map((call) => call.at));
	const checksMs = firstCallAt - run.startedAt;
	const ideal = (1000 * 50) / 10;
	const ratio = run.ms / ideal;
	return {
		name: '1. 1,000 phone lookups, 50 ms latency, concurrency 10 (after a warm-up of 100)',
		measured: `${Math.round(run.ms)} ms, ${run.failedItems} failed; of which ${checksMs} ms before the first call (every item's expression and checks run before anything is paid), so the calls themselves took ${((run.ms - checksMs) / ideal).toFixed(2)} × ideal; usage counting ${run.usageMs.toFixed(1)} ms, ${((100 * run.usageMs) / run.nodeMs).toFixed(2)} % of the node's time (issue 43: at most 2 %)`,
		target: `≤ 1.10 × ideal ${ideal} ms`,
		ratio,
		limit: 1.1,
		pass: ratio <= 1.1 && run.failedItems === 0,
		note: `${ratio.toFixed(2)} × ideal`,
	};
}

async function rateCap(emulator: EmulatorProcess): Promise<Figure> {
	await emulator.reset();
	await emulator.setFaults({ latencyMs: 50, rateCapPerSecond: 40 });
	const inputs = plates(400, 0.1);
	const distinct = new Set(inputs).size;
	const run = await runLookups('violations', inputs, { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url });
	const ledger = await emulator.ledger();
	const ideal = (distinct / 40) * 1000;
	const ratio = run.ms / ideal;
	const rejectedShare = ledger.totals.rejected429 / ledger.totals.calls;
	return {
		name: '2. 400 paid lookups (10% repeats) against a 40 req/s cap, default settings',
		measured: `${Math.round(run.ms)} ms, ${run.failedItems} failed, ${ledger.totals.billedCalls} billed of ${distinct} distinct, ${ledger.totals.rejected429} rejected of ${ledger.totals.calls} calls (${(rejectedShare * 100).toFixed(1)}%)`,
		target: `≤ 1.15 × ideal ${Math.round(ideal)} ms, 0 failed, billed = distinct, rejected ≤ 10%`,
		ratio,
		limit: 1.15,
		pass: ratio <= 1.15 && run.failedItems === 0 && ledger.totals.billedCalls === distinct && rejectedShare <= 0.1,
		note: `${ratio.toFixed(2)} × ideal`,
	};
}

/** CPU time of the bare undici loop making the same calls. */
async function bareLoopCpuMs(emulator: EmulatorProcess, tels: string[]): Promise<number> {
	const cpuBefore = process.cpuUsage();
	await bareLoop(emulator.url, emulator.demo.memberAppCode, tels);
	const cpu = process.cpuUsage(cpuBefore);
	return (cpu.user + cpu.system) / 1000;
}

const OVERHEAD_ROUNDS = 7;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function overhead(emulator: EmulatorProcess): Promise<Figure> {
	await emulator.reset();
	await emulator.setFaults({});
	const count = 5000;
	const tels = phones(count);
	const credentials = { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxConcurrent: 10 };
	// Two warm-ups of each (V8 still compiles in the background after the first), then interleaved
	// rounds and the median of each: the emulator shares the two cores, so single runs are noisy.
	const warmUp = phones(6000).slice(count);
	for (let lap = 0; lap < 2; lap++) {
		await runLookups('telephone', warmUp, credentials);
		await bareLoopCpuMs(emulator, warmUp);
		await runLookups('engineOnly', warmUp, {});
	}
	const node: number[] = [];
	const bare: number[] = [];
	const engine: number[] = [];
	for (let round = 0; round < OVERHEAD_ROUNDS; round++) {
		const run = await runLookups('telephone', tels, credentials);
		if (run.failedItems > 0) throw new Error(`${run.failedItems} lookups failed in the overhead run`);
		node.push(run.cpuMs);
		bare.push(await bareLoopCpuMs(emulator, tels));
		engine.push((await runLookups('engineOnly', tels, {})).cpuMs);
	}
	const [nodeMs, bareMs, engineMs] = [median(node), median(bare), median(engine)];
	// The node's own part: what it costs beyond n8n's engine reading the same expression per item.
	const ratio = (nodeMs - engineMs) / bareMs;
	const perItem = (ms: number) => `${((ms / count) * 1000).toFixed(0)} µs/item`;
	const rounds = (values: number[]) => values.map((ms) => ((ms / count) * 1000).toFixed(0)).join(', ');
	return {
		name: `4. CPU per item, 5,000 lookups at 0 ms latency (median of ${OVERHEAD_ROUNDS} interleaved rounds)`,
		measured: `node ${perItem(nodeMs)} (rounds ${rounds(node)}), of which n8n's engine alone, reading the same expression per item: ${perItem(engineMs)} (rounds ${rounds(engine)}); bare undici loop ${perItem(bareMs)} (rounds ${rounds(bare)}); node's own part ${perItem(nodeMs - engineMs)}; whole node ÷ bare ${(nodeMs / bareMs).toFixed(2)}`,
		target: "node's own part (node minus engine) ≤ 1.5 × the bare loop",
		ratio,
		limit: 1.5,
		pass: ratio <= 1.5,
		note: `${ratio.toFixed(2)} × bare`,
	};
}

/**
 * Peak RSS of a process that runs 10,000 lookups, beside one that runs n8n's engine alone over the
 * same items and outputs the same data (bench/memory.ts). The harness is bundled to plain JavaScript
 * first, so that the figure is the engine and the package as n8n runs them, without a TypeScript loader.
 */
/** Items run before the baseline of section 5 (see bench/memory.ts). */
const WARM_UP_ITEMS = 100;

function memory(emulator: EmulatorProcess): Figure {
	const bundle = join(REPO_ROOT, 'bench', '.build', 'memory.cjs');
	const esbuild = spawnSync(
		join(REPO_ROOT, 'node_modules', '.bin', 'esbuild'),
		[join(REPO_ROOT, 'bench', 'memory.ts'), '--bundle', '--platform=node', '--format=cjs', `--outfile=${bundle}`, ...['n8n-core', 'n8n-workflow', 'undici', 'zod'].map((name) => `--external:${name}`), '--log-level=warning'],
		{ stdio: 'inherit' },
	);
	if (esbuild.status !== 0) throw new Error('bundling bench/memory.ts failed');
	const growth = (run: MemoryRun) => run.maxRssMb - run.baselineMb;
	const coldGrowth = (run: MemoryRun) => run.processPeakMb - run.coldBaselineMb;
	// Peak RSS depends on when V8 collects, so three fresh processes of each, interleaved, and the median.
	const node: MemoryRun[] = [];
	const engine: MemoryRun[] = [];
	const bare: MemoryRun[] = [];
	for (let round = 0; round < 3; round++) {
		for (const [kind, runs] of [['telephone', node], ['engineOnly', engine], ['bare', bare]] as const) {
			const child = spawnSync(process.execPath, [bundle, emulator.url, emulator.demo.memberAppCode, '10000', kind, String(WARM_UP_ITEMS)], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
			if (child.status !== 0) throw new Error(`memory run failed: ${child.stderr}`);
			runs.push(JSON.parse(child.stdout.trim().split('\n').pop() as string) as MemoryRun);
		}
	}
	const byGrowth = (runs: MemoryRun[]) => [...runs].sort((a, b) => growth(a) - growth(b));
	const result = byGrowth(node)[1];
	const engineResult = byGrowth(engine)[1];
	const bareResult = byGrowth(bare)[1];
	const failed = node.reduce((sum, run) => sum + run.failedItems, 0);
	const heapPeak = result.peakHeapUsedMb - result.baselineHeapUsedMb;
	const external = result.peakExternalMb - result.baselineExternalMb;
	const own = growth(result) - growth(engineResult);
	// Every process, not the median: V8 doubles its young generation in some processes and not others.
	const worst = Math.max(...node.map(growth));
	const youngKept = node.every((run) => run.youngEndMb === run.youngStartMb);
	const survived = (runs: MemoryRun[]) => runs.map((run) => run.survivedPerItemBytes.toLocaleString('en')).join(', ');
	const youngEnd = (runs: MemoryRun[]) => runs.map((run) => run.youngEndMb).join(', ');
	return {
		name: `5. Peak RSS growth, 10,000 items in one execution (3 processes, each; baseline after a warm-up of ${WARM_UP_ITEMS} items)`,
		measured:
			`${worst} MB at most (runs ${node.map(growth).join(', ')} MB; the median's peak ${result.maxRssMb} MB, the kernel's peak RSS being reset before it; ${result.baselineMb} MB before the first item, once the inputs were built, loading's leftovers collected, and a warm-up of ${WARM_UP_ITEMS} items in an execution of its own had loaded what the run needs (undici's HTTP parser, the connections, compiled code) and its garbage was collected; ${result.items} items, ${failed} failed). ` +
			`Bytes that survived the run's young collections, per item (what V8 adds up to decide when to double its young generation): ${survived(node)}; young generation at the end ${youngEnd(node)} MB (${result.youngStartMb} MB before the first item). ` +
			`The whole process's peak from the process with only n8n-core and the package loaded (${result.coldBaselineMb} MB), the warm-up included: ${coldGrowth(result)} MB. ` +
			`Where it goes (the median process): V8's young generation, ${result.youngStartMb} MB reserved before the first item and ${result.youngPeakMb} MB at most during the run (V8 doubles it once as many bytes as it holds have survived its collections since it last grew, up to 2 × 64 MB on Node 24 and 2 × 16 MB on Node 20, and the run then touches the new pages), the old generation +${result.oldPeakMb.toFixed(0)} MB in use at its peak; JS heap in use at its peak +${heapPeak.toFixed(0)} MB, of which live after the run ${result.liveGrowthMb.toFixed(0)} MB (the output items, and the execution's remembered answers ${result.answersMb.toFixed(1)} MB), the rest garbage not yet collected; ` +
			`outside the heap +${external.toFixed(0)} MB; the rest is compiled code and allocator slack. ` +
			`n8n's engine alone over the same items, outputting the same data, warmed up the same way: ${growth(engineResult)} MB (runs ${engine.map(growth).join(', ')} MB; ${coldGrowth(engineResult)} MB from its cold process; survived per item ${survived(engine)} bytes; young generation at the end ${youngEnd(engine)} MB, old generation +${engineResult.oldPeakMb.toFixed(0)} MB); the node's own part ${own} MB. The bare undici loop of section 4 making the same calls in the same kind of process (n8n-core loaded, warmed up the same way) and keeping nothing: ${growth(bareResult)} MB (runs ${bare.map(growth).join(', ')} MB; survived per item ${survived(bare)} bytes; young generation at the end ${youngEnd(bare)} MB)`,
		target: '≤ 50 MB growth in each process, whole process, the young generation not doubled',
		ratio: worst / 50,
		limit: 1,
		pass: worst <= 50 && youngKept && failed === 0,
		note: `${worst} MB at most${youngKept ? '' : ', young generation doubled'}; survived per item ${result.survivedPerItemBytes.toLocaleString('en')} bytes (engine alone ${engineResult.survivedPerItemBytes.toLocaleString('en')})`,
	};
}

function queueFigure(result: QueueModeResult): Figure {
	const ratio = result.seconds / result.idealSeconds;
	const rejectedShare = result.rejected429 / result.calls;
	return {
		name: '6. Queue mode: 2 executions × 200 telephone lookups at once on 2 workers, 20 req/s cap (Shared Redis URL for Limits and Send Records)',
		measured: `${result.seconds.toFixed(1)} s end to end (first to last gateway call ${result.callSpanSeconds.toFixed(1)} s), ${result.failedItems} failed, ${result.rejected429} rejected of ${result.calls} calls (${(rejectedShare * 100).toFixed(1)}%), executions per worker ${result.perWorker.join(' + ')}`,
		target: `≤ 1.15 × ideal ${result.idealSeconds} s, 0 failed, rejected ≤ 10%`,
		ratio,
		limit: 1.15,
		pass: ratio <= 1.15 && result.failedItems === 0 && rejectedShare <= 0.1,
		note: `${ratio.toFixed(2)} × ideal`,
	};
}

function sendAndCheckFigure(result: SendAndCheckResult): Figure {
	const ratio = result.nodeMs / result.idealMs;
	const pass = ratio <= 1.5 && result.sendSpreadMs <= 1000 && result.sendsBeforePolls && result.delivered === result.numbers;
	return {
		name: `8. Send and Check Delivery: ${result.numbers} numbers, each delivered ${result.deliveryDelayMs / 1000} s after its send, poll every ${result.pollIntervalMs / 1000} s`,
		measured: `node ${Math.round(result.nodeMs)} ms (workflow ${Math.round(result.workflowMs)} ms), sends spread over ${result.sendSpreadMs} ms, ${result.sendsBeforePolls ? 'every send before the first status query' : 'status queries began before the last send'}, ${result.delivered} of ${result.numbers} delivered, ${result.statusQueries} status queries`,
		target: `node ≤ 1.5 × ideal ${result.idealMs} ms, every send within 1 s of the first`,
		ratio,
		limit: 1.5,
		pass,
		note: `${ratio.toFixed(2)} × ideal`,
	};
}

/** Writes a section run alone into REPORT.md between its markers, stamped with today and this machine. */
function spliceIntoReport(section: (stamp: string) => string, startMarker?: string, endMarker?: string): void {
	const stamp = `${new Date().toISOString().slice(0, 10)}, ${machineLine()}`;
	const path = join(RESULTS, 'REPORT.md');
	writeFileSync(path, spliceSection(readFileSync(path, 'utf8'), section(stamp), startMarker, endMarker));
	console.log(`Report: bench/results/REPORT.md`);
}

/** BENCH_ONLY=sendAndCheck: only the Send and Check part, spliced into the existing report. */
async function sendAndCheckOnly() {
	const emulator = await startEmulatorProcess();
	try {
		const figure = sendAndCheckFigure(await sendAndCheckBench(emulator));
		console.log(figure);
		spliceIntoReport((stamp) => sendAndCheckSection(figure, stamp), SEND_AND_CHECK_START, SEND_AND_CHECK_END);
	} finally {
		await emulator.stop();
	}
}

/** BENCH_ONLY=reuse: only the Reuse Answers For part, spliced into the existing report. */
async function reuseOnly() {
	const emulator = await startEmulatorProcess();
	try {
		const figure = await reuseBench(emulator);
		console.log(figure);
		spliceIntoReport((stamp) => reuseSection(figure, stamp), REUSE_START, REUSE_END);
	} finally {
		await emulator.stop();
	}
}

/**
 * BENCH_ONLY=throughput,rateCap,sideBySide,overhead,memory,sendAndCheck,reuse,instructions (any of them,
 * more than one; `reuse` or `sendAndCheck` alone goes to the report): those figures alone, in the order
 * given, printed and not written to the report, for trying a change on the shared machine without the
 * whole run. All but `instructions`, in that order, are the full run up to section 10.
 */
async function focusedOnly(names: string[]) {
	const sections: Record<string, (emulator: EmulatorProcess) => Promise<Figure | string> | Figure> = {
		throughput,
		rateCap,
		overhead,
		memory,
		sideBySide: async (emulator) => sideBySideTable(await sideBySide(emulator, plates(400, 0.1), 40)),
		sendAndCheck: async (emulator) => sendAndCheckFigure(await sendAndCheckBench(emulator)),
		reuse: reuseBench,
		instructions: instructionCounts,
	};
	const unknown = names.filter((name) => !sections[name]);
	if (unknown.length > 0) throw new Error(`BENCH_ONLY: no section ${unknown.join(', ')}; choose from queue, sendAndCheck, records, reuse, bulkSms, ${Object.keys(sections).join(', ')}`);
	const emulator = await startEmulatorProcess();
	try {
		for (const name of names) console.log(await section(() => sections[name](emulator)));
	} finally {
		await emulator.stop();
	}
}

/**
 * BENCH_ONLY=bulkSms: only Bulk SMS in real n8n, spliced into the existing report. BULK_SIZES=1000
 * and BULK_STORES=SQLite narrow it for trying a change, BULK_REPEATS=1 runs each row once; a
 * narrowed run is printed, not written. BULK_PROFILE=<folder> and BULK_SPANS=1 say where the time goes (bench/bulkSms.ts profileEnv).
 */
async function bulkOnly() {
	const emulator = await startEmulatorProcess();
	try {
		const sizes = process.env.BULK_SIZES?.split(',').map(Number) ?? BULK_SIZES;
		const stores = (process.env.BULK_STORES?.split(',') ?? ['SQLite', 'Redis']) as BulkStore[];
		const repeats = Number(process.env.BULK_REPEATS ?? BULK_REPEATS);
		const runs = await section(() => bulkSmsBench(emulator, { sizes, stores, repeats }));
		for (const run of runs) console.log(bulkFigure(run));
		if (process.env.BULK_SIZES || process.env.BULK_STORES || repeats !== BULK_REPEATS) return;
		spliceIntoReport((stamp) => bulkSection(runs, stamp), BULK_START, BULK_END);
	} finally {
		await emulator.stop();
	}
}

/** BENCH_ONLY=queue: only the queue-mode part, spliced into the existing report. */
async function queueOnly() {
	const emulator = await startEmulatorProcess();
	try {
		const result = await queueMode(emulator);
		const figure = queueFigure(result);
		console.log(figure, result.cpu);
		spliceIntoReport((stamp) => queueSection(result, figure, stamp));
	} finally {
		await emulator.stop();
	}
}

async function main() {
	const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
	if (build.status !== 0) process.exit(1);
	if (process.env.BENCH_ONLY === 'queue') return await queueOnly();
	if (process.env.BENCH_ONLY === 'sendAndCheck') return await sendAndCheckOnly();
	if (process.env.BENCH_ONLY === 'reuse') return await reuseOnly();
	if (process.env.BENCH_ONLY === 'month') return await monthOnly(`${new Date().toISOString().slice(0, 10)}, ${machineLine()}`);
	if (process.env.BENCH_ONLY === 'bulkSms') return await bulkOnly();
	if (process.env.BENCH_ONLY === 'records') return await recordsOnly(`${new Date().toISOString().slice(0, 10)}, ${machineLine()}`);
	if (process.env.BENCH_ONLY) return await focusedOnly(process.env.BENCH_ONLY.split(','));
	const started = Date.now();
	const emulator = await startEmulatorProcess();
	const figures: Figure[] = [];
	let sideRows: SideBySideRow[] = [];
	let queue: QueueModeResult | undefined;
	let sendAndCheck: Figure | undefined;
	let reuse: Figure | undefined;
	let records: StoreRun[] = [];
	let month: string | undefined;
	let bulk: BulkRun[] = [];
	try {
		figures.push(await section(() => throughput(emulator)));
		console.log(figures.at(-1));
		figures.push(await section(() => rateCap(emulator)));
		console.log(figures.at(-1));
		sideRows = await section(() => sideBySide(emulator, plates(400, 0.1), 40));
		console.table(sideRows);
		figures.push(await section(() => overhead(emulator)));
		console.log(figures.at(-1));
		figures.push(section(() => memory(emulator)));
		console.log(figures.at(-1));
		sendAndCheck = sendAndCheckFigure(await section(() => sendAndCheckBench(emulator)));
		figures.push(sendAndCheck);
		console.log(figures.at(-1));
		reuse = await section(() => reuseBench(emulator));
		figures.push(reuse);
		console.log(figures.at(-1));
		queue = await section(() => queueMode(emulator));
		figures.push(queueFigure(queue));
		console.log(figures.at(-1), queue.cpu);
		records = await section(() => recordsBench(emulator));
		const monthRun = section(() => monthBench(emulator));
		figures.push(...monthFigures(monthRun));
		console.log(figures.slice(-3));
		month = monthSection(monthRun, `${new Date().toISOString().slice(0, 10)}, ${machineLine()}`);
		bulk = await section(() => bulkSmsBench(emulator));
		figures.push(...bulk.map(bulkFigure));
	} finally {
		await emulator.stop();
	}
	const table = writeReport({ figures, sideRows, queue, sendAndCheck, reuse, records, month, bulk, started, queueFigure });
	console.log(`\n${table}\n\nSide by side:\n${sideBySideTable(sideRows)}\n\nReport: bench/results/REPORT.md`);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
