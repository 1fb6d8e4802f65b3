/** One variant of section 4 for bench/instructions.ts: a warm-up of 500 items, then `count` items, in a child under callgrind. */
import { bareLoop } from './bareLoop';
import { phones } from './inputs';
import { runLookups } from './lookups';

async function main() {
	const [baseUrl, appCode, kind, count] = process.argv.slice(2);
	const numbers = phones(Number(count) + 500);
	const [measured, warmUp] = [numbers.slice(0, Number(count)), numbers.slice(Number(count))];
	const credentials = { appCodeSecret: appCode, baseUrl, maxConcurrent: 10 };
	for (const tels of [warmUp, measured]) {
		if (kind === 'bare') await bareLoop(baseUrl, appCode, tels);
		else if ((await runLookups(kind as 'telephone' | 'engineOnly', tels, credentials)).failedItems > 0) throw new Error(`${kind}: lookups failed`);
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
