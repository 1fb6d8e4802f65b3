import type { IExecuteFunctions } from 'n8n-workflow';

import { hintStoreFallback, openDurableStore } from '../openStore';
import { runIndexOf } from '../../state/executionMemory';
import { SendRecords, type RecordRules } from './sendRecords';

/** The send records of one node run, on the durable store openDurableStore picks for the node. */
export async function openSendRecords(ctx: IExecuteFunctions, rules: RecordRules): Promise<SendRecords> {
	const node = ctx.getNode();
	const store = await openDurableStore(ctx);
	// Records in process memory guard nothing across restarts or processes: the hint says so.
	hintStoreFallback(ctx, store);
	return new SendRecords(store, {
		node: `${ctx.getWorkflow().id ?? ''}|${node.id ?? node.name}`,
		// Without an execution id nothing can be shared with a re-run: a private one keeps runs apart.
		execution: ctx.getExecutionId?.() || `unscoped-${Date.now()}-${Math.random()}`,
		runIndex: runIndexOf(ctx),
	}, rules);
}
