/**
 * Run by openStore.test.ts on a Node without node:sqlite (`--no-experimental-sqlite`), as n8n 1.x
 * on Node 20 is: loads the package's store, opens it for a node and a trigger, and prints what it
 * got as one JSON line.
 */
import type { NodeExecutionHint } from 'n8n-workflow';

import { hintStoreFallback, openDurableStore, storeFallbackNotice } from '../../nodes/shared/store/openStore';
import { increment } from './contract';
import { nodeContext, webhookContext } from './selection';

(async () => {
	const hints: NodeExecutionHint[] = [];
	const context = nodeContext({ sharedLimitRedisUrl: '' }, hints);
	const store = await openDurableStore(context);
	hintStoreFallback(context, store);
	const sameForTrigger = (await openDurableStore(webhookContext())) === store;
	const counted = [await increment(store, 'probe'), await increment(store, 'probe')];
	process.stdout.write(`${JSON.stringify({ kind: store.kind, label: store.label, sameForTrigger, counted, notice: storeFallbackNotice(store), hints })}\n`);
})().catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
	process.exit(1);
});
