/**
 * Peak RSS of one process that runs 10,000 lookups through the engine, and where it goes; bench/run.ts
 * bundles it to JavaScript and runs it as a child. `engineOnly` runs n8n's engine over the same
 * items with a node that reads the expression and calls nothing, for comparison.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { forgetAllExecutionMemory } from '../dist/nodes/shared/testing.js';
import { phones } from './inputs';
import { runLookups } from './lookups';

export interface MemoryRun {
	items: number;
	failedItems: number;
	ms: number;
	/** Peak RSS of the process, and before the first item (n8n-core and the package loaded). */
	maxRssMb: number;
	baselineMb: number;
	/** Sampled every 10 ms during the run: V8's heap in use (live and not yet collected) and memory outside it. */
	peakHeapUsedMb: number;
	peakExternalMb: number;
	baselineHeapUsedMb: number;
	baselineExternalMb: number;
	/** After the run and a full collection: live heap growth with the output held, and the share of the execution's remembered answers. */
	liveGrowthMb: number;
	answersMb: number;
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function main() {
	const [baseUrl, appCode, count = '10000', kind = 'telephone'] = process.argv.slice(2);
	// A full collection on demand: it tells live data from garbage.
	setFlagsFromString('--expose-gc');
	const collect = runInNewContext('gc') as () => void;
	const baselineMb = maxRssMb();
	// Loading leaves garbage behind: collected first, so that the heap figures start from live data.
	collect();
	const before = process.memoryUsage();
	let peakHeapUsed = before.heapUsed;
	let peakExternal = before.external;
	const sampler = setInterval(() => {
		const now = process.memoryUsage();
		peakHeapUsed = Math.max(peakHeapUsed, now.heapUsed);
		peakExternal = Math.max(peakExternal, now.external);
	}, 10);
	const run = await runLookups(kind as 'telephone' | 'engineOnly', phones(Number(count)), { appCodeSecret: appCode, baseUrl, maxConcurrent: 10 });
	clearInterval(sampler);
	const peakMb = maxRssMb();
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
		peakHeapUsedMb: mb(peakHeapUsed),
		peakExternalMb: mb(peakExternal),
		baselineHeapUsedMb: mb(before.heapUsed),
		baselineExternalMb: mb(before.external),
		liveGrowthMb: mb(withAnswers - before.heapUsed),
		answersMb: mb(withAnswers - withoutAnswers),
	};
	console.log(JSON.stringify(result));
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
