/**
 * Run by queueRedis.test.ts in a process of its own, as n8n runs: NODE_EXTRA_CA_CERTS is read by
 * Node only at start. For each set of n8n settings given (JSON in argv), opens the store as a
 * trigger does and counts once; prints one JSON line: per set, the count or the error's message.
 */
import { openDurableStore } from '../../nodes/shared/store/openStore';
import { closeAllRedis, forgetOpenStores } from '../../nodes/shared/testing';
import { freshKey, increment } from './contract';
import { webhookContext, withEnvironment } from './selection';

(async () => {
	const settings = JSON.parse(process.argv[2]) as Array<Record<string, string>>;
	const results: Array<number | string> = [];
	for (const values of settings) {
		const restore = withEnvironment(values);
		try {
			results.push(await increment(await openDurableStore(webhookContext()), freshKey('probe')));
		} catch (error) {
			results.push(error instanceof Error ? error.message : String(error));
		} finally {
			restore();
			closeAllRedis();
			forgetOpenStores();
		}
	}
	process.stdout.write(`${JSON.stringify(results)}\n`);
})().catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
	process.exit(1);
});
