/**
 * Peak RSS of one process that runs 10,000 lookups through the engine, and where it goes; bench/run.ts
 * bundles it to JavaScript and runs it as a child. `engineOnly` runs n8n's engine over the same
 * items with a node that reads the expression, calls nothing and outputs what the Telephone node
 * outputs for the number (the same data, held the same way), for comparison; `bare` makes the same
 * calls with the bare undici loop of section 4 and keeps nothing.
 */
import type { IDataObject } from 'n8n-workflow';
import { readFileSync, writeFileSync } from 'node:fs';
import { GCProfiler, getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { friendlyTelephone } from '../dist/nodes/shared/output/friendly.js';
import { forgetAllExecutionMemory } from '../dist/nodes/shared/testing.js';
import { telephoneIdentity } from '../test/emulator/samples';
import { bareLoop } from './bareLoop';
import { phones } from './inputs';
import { runLookups } from './lookups';

export interface MemoryRun {
	items: number;
	failedItems: number;
	ms: number;
	/** Peak RSS during the run, and RSS before its first item (after the warm-up: see main). */
	maxRssMb: number;
	baselineMb: number;
	/** Peak RSS with n8n-core and the package loaded, before the inputs and the warm-up; and the peak of the whole process. */
	coldBaselineMb: number;
	processPeakMb: number;
	/** Sampled every 10 ms during the run: V8's heap in use (live and not yet collected) and memory outside it. */
	peakHeapUsedMb: number;
	peakExternalMb: number;
	baselineHeapUsedMb: number;
	baselineExternalMb: number;
	/** After the run and a full collection: live heap growth with the output held, and the share of the execution's remembered answers. */
	liveGrowthMb: number;
	answersMb: number;
	/**
	 * V8's young generation (its two semi-spaces), reserved before the first item and at most during
	 * the run: V8 doubles it once as many bytes have survived its collections since it last grew, up
	 * to 2 × 64 MB on Node 24 (2 × 16 MB on Node 20), and the run then touches the new pages.
	 */
	youngStartMb: number;
	youngPeakMb: number;
	/** The old generation's growth in use at its peak during the run: what outlived two young collections. */
	oldPeakMb: number;
	/** The young generation reserved once the run is over: V8 doubled it during the run when above youngStartMb. */
	youngEndMb: number;
	/**
	 * Bytes that survived the run's young collections (copied within the young generation or promoted
	 * out of it), summed over them, ÷ the items: what V8 counts towards doubling the young generation.
	 */
	survivedPerItemBytes: number;
	scavenges: number;
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
/** Bytes of one V8 heap space: `space_size` reserved, or `space_used_size`. */
const spaceBytes = (name: string, field: 'space_size' | 'space_used_size') => getHeapSpaceStatistics().find((space) => space.space_name === name)?.[field] ?? 0;
const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
/** The kernel's figures for this process (Linux): RSS now, and its peak since start or the last reset. */
const statusMb = (field: 'VmRSS' | 'VmHWM') => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024);
/** Sets the kernel's peak RSS of this process to its RSS now (clear_refs 5), so that the peak read after the run is the run's own. */
const resetPeakRss = () => writeFileSync('/proc/self/clear_refs', '5');

type GcStatistics = ReturnType<GCProfiler['stop']>['statistics'][number];
const YOUNG_SPACES = new Set(['new_space', 'new_large_object_space']);
/**
 * What survived one young collection: what it left in the young generation, and what it promoted
 * (the old spaces' growth across it). V8 adds this up and doubles the young generation once the sum
 * since its last growth passes what the young generation holds (Heap::ShouldResizeNewSpace).
 */
function survivedBytes({ beforeGC, afterGC }: GcStatistics): number {
	let survived = 0;
	for (const after of afterGC.heapSpaceStatistics) {
		const before = beforeGC.heapSpaceStatistics.find((space) => space.spaceName === after.spaceName);
		survived += YOUNG_SPACES.has(after.spaceName) ? after.spaceUsedSize : Math.max(0, after.spaceUsedSize - (before?.spaceUsedSize ?? 0));
	}
	return survived;
}

/** The Telephone node's output for a number, as its answer comes (parsed from JSON): engineOnly outputs it. */
function telephoneOutput(phone: string) {
	return JSON.parse(JSON.stringify(friendlyTelephone(telephoneIdentity(phone), { phoneAsGiven: phone }))) as IDataObject;
}

async function main() {
	// `warmUp` items run before the baseline, in an execution of their own with other numbers: what the
	// run needs before its first item (undici's HTTP parser, the connections to the gateway, compiled
	// code) is then in the baseline, so that the growth is what the items cost. Both kinds get it.
	const [baseUrl, appCode, count = '10000', kind = 'telephone', warmUpItems = '100'] = process.argv.slice(2);
	// A full collection on demand: it tells live data from garbage.
	setFlagsFromString('--expose-gc');
	const collect = runInNewContext('gc') as () => void;
	const coldBaselineMb = maxRssMb();
	const credentials = { appCodeSecret: appCode, baseUrl, maxConcurrent: 10 };
	const typed = kind as 'telephone' | 'engineOnly' | 'bare';
	const runKind = async (tels: string[]) => {
		if (typed !== 'bare') return await runLookups(typed, tels, credentials, undefined, output);
		const started = performance.now();
		await bareLoop(baseUrl, appCode, tels);
		return { items: tels, failedItems: 0, ms: performance.now() - started };
	};
	const output = typed === 'engineOnly' ? telephoneOutput : undefined;
	const numbers = phones(Number(count) + Number(warmUpItems));
	const [inputs, warmUp] = [numbers.slice(0, Number(count)), numbers.slice(Number(count))];
	// Loading's leftovers promoted now, in every kind of process alike: V8 doubles its young generation
	// once the bytes surviving its collections since it last grew pass what it holds, and a warm-up that
	// makes a young collection before the full one below (the node's does; the engine's does not)
	// counted them twice, some 8 MB of the 32 that trigger it.
	collect();
	if ((await runKind(warmUp)).failedItems > 0) throw new Error('the warm-up failed');
	// Loading and the warm-up leave garbage behind: collected first, so that the heap figures start from live data.
	collect();
	// The warm-up's own peak (compiling undici's parser, say) must not stand in for the run's.
	const peakBeforeRunMb = statusMb('VmHWM');
	resetPeakRss();
	const baselineMb = statusMb('VmRSS');
	const before = process.memoryUsage();
	let peakHeapUsed = before.heapUsed;
	let peakExternal = before.external;
	const youngStart = spaceBytes('new_space', 'space_size');
	const oldStart = spaceBytes('old_space', 'space_used_size');
	let [youngPeak, oldPeak] = [youngStart, oldStart];
	const sample = () => {
		const now = process.memoryUsage();
		peakHeapUsed = Math.max(peakHeapUsed, now.heapUsed);
		peakExternal = Math.max(peakExternal, now.external);
		youngPeak = Math.max(youngPeak, spaceBytes('new_space', 'space_size'));
		oldPeak = Math.max(oldPeak, spaceBytes('old_space', 'space_used_size'));
	};
	const sampler = setInterval(sample, 10);
	const profiler = new GCProfiler();
	profiler.start();
	const run = await runKind(inputs);
	const scavenges = profiler.stop().statistics.filter((gc) => gc.gcType === 'Scavenge');
	clearInterval(sampler);
	sample();
	const youngEnd = spaceBytes('new_space', 'space_size');
	const peakMb = statusMb('VmHWM');
	collect();
	const withAnswers = process.memoryUsage().heapUsed;
	forgetAllExecutionMemory();
	collect();
	const withoutAnswers = process.memoryUsage().heapUsed;
	const result: MemoryRun = {
		items: run.items.length,
		failedItems: run.failedItems,
		ms: Math.round(run.ms),
		maxRssMb: peakMb,
		baselineMb,
		coldBaselineMb,
		processPeakMb: Math.max(peakBeforeRunMb, peakMb),
		peakHeapUsedMb: mb(peakHeapUsed),
		peakExternalMb: mb(peakExternal),
		baselineHeapUsedMb: mb(before.heapUsed),
		baselineExternalMb: mb(before.external),
		liveGrowthMb: mb(withAnswers - before.heapUsed),
		answersMb: mb(withAnswers - withoutAnswers),
		youngStartMb: mb(youngStart),
		youngPeakMb: mb(youngPeak),
		oldPeakMb: mb(oldPeak - oldStart),
		youngEndMb: mb(youngEnd),
		survivedPerItemBytes: Math.round(scavenges.reduce((sum, gc) => sum + survivedBytes(gc), 0) / inputs.length),
		scavenges: scavenges.length,
	};
	console.log(JSON.stringify(result));
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
