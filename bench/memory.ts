/** Peak RSS of one process that runs 10,000 lookups through the engine; bench/run.ts bundles it to JavaScript and runs it as a child. */
import { runLookups } from './lookups';
import { phones } from './inputs';

async function main() {
	const [baseUrl, appCode, count = '10000'] = process.argv.slice(2);
	const baselineMb = Math.round(process.resourceUsage().maxRSS / 1024);
	const run = await runLookups('telephone', phones(Number(count)), { appCodeSecret: appCode, baseUrl, maxConcurrent: 10 });
	const maxRssMb = process.resourceUsage().maxRSS / 1024;
	console.log(JSON.stringify({ items: run.items.length, failedItems: run.failedItems, ms: Math.round(run.ms), maxRssMb: Math.round(maxRssMb), baselineMb }));
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
