/**
 * The wall time of the built package's usage step (usage/runUsage.ts countRunUsage: a run's counts
 * and their one store update) in this process, for issue 43's check that counting usage costs at
 * most 2 % of a node run. The router calls it through its module's exports, so wrapping the export
 * times every call and changes nothing it does.
 */
type CountRunUsage = (...args: unknown[]) => Promise<void>;
// A plain require: its exports object is the one the router calls through, also inside bench/memory.ts's bundle
// (esbuild bundles a literal require; a createRequire'd path was left to be found beside the bundle, and was not).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runUsageModule = require('../dist/nodes/shared/usage/runUsage.js') as { countRunUsage: CountRunUsage };

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
