import { NodeOperationError, type IExecuteFunctions, type INode } from 'n8n-workflow';

import { hintStoreFallback, openDurableStore } from '../openStore';
import { runIndexOf } from '../../state/executionMemory';
import { RecordsFailure, SendRecords, type RecordRules } from './sendRecords';

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

const itemList = (items: number[]) => items.map((itemIndex) => itemIndex + 1).join(', ');

/** What a RecordsFailure leaves in the store, and what that means for the next execution. */
export function keptRecordsText(failure: RecordsFailure, repeatWindowMinutes: number): string {
	const { reserved, unknown } = failure.kept;
	const parts: string[] = [];
	const items = (list: number[]) => `item${list.length === 1 ? '' : 's'} ${itemList(list)}`;
	// The store's answer was lost or garbled: the release may have been applied, so this says "may".
	if (reserved.length > 0) {
		parts.push(`The reservations of ${items(reserved)} may still be in ${failure.store}; they are only reservations, so the next execution of this node takes them over and sends those messages.`);
	}
	if (unknown.length > 0) {
		parts.push(
			`The records of ${items(unknown)} could not be released and may stay in ${failure.store} as "outcome unknown": if so, another execution of this node skips ${unknown.length === 1 ? 'that message' : 'those messages'} as a repeat for ${repeatWindowMinutes} minutes, and ${unknown.length === 1 ? 'it counts' : 'they count'} against the per-number limits. Send ${unknown.length === 1 ? 'it' : 'them'} again after that, or with Repeat Window (Minutes) 0.`,
		);
	}
	if (parts.length === 0) parts.push('Nothing stays recorded: running again sends every message.');
	return parts.join(' ');
}

/**
 * The records could not be used, so nothing (more) was sent: without them a retried execution
 * could text people twice. `what` names what was not done ("SMS", "Signature create").
 */
export function recordsUnavailable(node: INode, what: string, error: unknown, repeatWindowMinutes: number, itemIndex?: number): NodeOperationError {
	const failure = error instanceof RecordsFailure ? error : undefined;
	const store = failure?.store ?? 'the store';
	const reason = failure?.reason ?? String(error);
	// The store's own errors name it already (and the field or setting to fix).
	const message = reason.includes(store) ? `${what} not sent: ${reason}` : `${what} not sent: the send records in ${store} could not be used: ${reason}`;
	const nodeError = new NodeOperationError(node, message, {
		description: `Nothing was sent, as without the records a retried execution could text people twice. ${failure ? keptRecordsText(failure, repeatWindowMinutes) : ''}`.trim(),
		itemIndex,
	});
	// n8n swaps a message naming a connection code (ECONNREFUSED) for a generic one; this one names the store.
	nodeError.message = message;
	return nodeError;
}
