/**
 * The wall time of the built package's usage step (usage/runUsage.ts countRunUsage: a run's counts
 * and their one store update) in this process, for issue 43's check that counting usage costs at
 * most 2 % of a node run. The router calls it through its module's exports, so wrapping the export
 * times every call and changes nothing it does.
 */
import { createRequire } from 'node:module';

type CountRunUsage = (...args: unknown[]) => Promise<void>;
const runUsageModule = createRequire(__filename)('../dist/nodes/shared/usage/runUsage.js') as { countRunUsage: CountRunUsage };

/** Times every usage step until `stop`, which answers their total wall time in ms. */
export function timeUsage(): { stop: () => number } {
	const original = runUsageModule.countRunUsage;
	let ms = 0;
	runUsageModule.countRunUsage = async function (this: unknown, ...args: unknown[]) {
		const started = performance.now();
		try {
			await original.apply(this, args);
		} finally {
			ms += performance.now() - started;
		}
	};
	return {
		stop: () => {
			runUsageModule.countRunUsage = original;
			return ms;
		},
	};
}
