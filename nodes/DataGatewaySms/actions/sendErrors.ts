import { NodeOperationError, type INode } from 'n8n-workflow';

import { asNodeError, GatewayFailure, inputError } from '../../shared/errors/failures';
import { RecordsFailure } from '../../shared/store/sendRecords/sendRecords';

/**
 * Every error and note an SMS send (or a signature or template create) gives an item, in one
 * place: each says whether the message went out, what stays in the send records, and what to do.
 */

const itemList = (items: number[]) => items.map((itemIndex) => itemIndex + 1).join(', ');
const itemsNamed = (list: number[]) => `item${list.length === 1 ? '' : 's'} ${itemList(list)}`;

/** What a RecordsFailure leaves in the store, and what that means for the next execution. */
export function keptRecordsText(failure: RecordsFailure, repeatWindowMinutes: number): string {
	const { reserved, unknown, notStarted } = failure.kept;
	const parts: string[] = [];
	// No paid call followed: the records a lost answer may have left are this process's to take back.
	if (notStarted.length > 0) {
		const one = notStarted.length === 1;
		const records = one ? 'its record' : 'their records';
		const messages = one ? 'the message' : 'the messages';
		const afterRestart =
			repeatWindowMinutes > 0
				? `another execution skips ${messages} as a repeat for ${repeatWindowMinutes} minutes: send ${one ? 'it' : 'them'} again after that, or with Repeat Window (Minutes) 0`
				: `${one ? 'it counts' : 'they count'} against this node's per-number limits until the limits' windows end`;
		parts.push(
			`Nothing was sent for ${itemsNamed(notStarted)}, but ${failure.store} failed while ${records} changed, so ${records} may still say the send started. This n8n process releases ${records} as soon as ${failure.store} answers again (it tries within seconds at first, then up to every 5 minutes, and before this node's next send in this process); the next execution then sends ${messages}. An execution in another n8n process before that, or after a restart of this one, finds ${records} unchanged: ${afterRestart}.`,
		);
	}
	// "may" only where the store's answer was lost or garbled (the release may have been applied); a refused release left them there.
	if (reserved.length > 0) {
		const where = failure.certain ? `are still in ${failure.store}` : `may still be in ${failure.store}`;
		parts.push(`The reservations of ${itemsNamed(reserved)} ${where}; they are only reservations, so the next execution of this node takes them over and sends those messages.`);
	}
	if (unknown.length > 0) {
		parts.push(
			`The records of ${itemsNamed(unknown)} could not be released and may stay in ${failure.store} as "outcome unknown": if so, another execution of this node skips ${unknown.length === 1 ? 'that message' : 'those messages'} as a repeat for ${repeatWindowMinutes} minutes, and ${unknown.length === 1 ? 'it counts' : 'they count'} against the per-number limits. Send ${unknown.length === 1 ? 'it' : 'them'} again after that, or with Repeat Window (Minutes) 0.`,
		);
	}
	if (parts.length === 0) parts.push('Nothing stays recorded: running again sends every message.');
	return parts.join(' ');
}

/** Adds `note` to the error's description (the error is changed and returned). */
function describeMore<E>(error: E, note: string): E {
	if (!(error instanceof Error)) return error;
	const withDescription = error as Error & { description?: string };
	withDescription.description = withDescription.description ? `${withDescription.description} ${note}` : note;
	return error;
}

/** Adds to `error` what a failed release left in the store; any other failure of the release is passed on. */
export function withKeptRecords<E>(error: E, failure: unknown, repeatWindowMinutes: number): E {
	if (!(failure instanceof RecordsFailure)) throw failure;
	return describeMore(error, keptRecordsText(failure, repeatWindowMinutes));
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

/** A per-number limit refusal of one item: names the number, the window and the fix. */
export function limitRefusal(node: INode, itemIndex: number, problem: string): NodeOperationError {
	return inputError(node, itemIndex, 'Phone Number', `not sent: this ${problem}`, 'Send fewer messages to this number, or raise the limits in Options if your account allows more.');
}

/** The error of an item whose send certainly failed: says that it was not sent. */
export function notSentError(node: INode, error: unknown, itemIndex: number, phone: string) {
	const nodeError = asNodeError(node, error, itemIndex);
	if (!/not sent/i.test(nodeError.message)) nodeError.message = `${nodeError.message} (the SMS to ${phone} was not sent)`;
	return nodeError;
}

const UNKNOWN_OUTCOME_HINT =
	'It was not sent again, to avoid a double message. No task ID came back, so check for it before sending again: a delivery report to this number (SMS Trigger) or the send log of your gateway account; with a task ID, Message > Get Status shows it.';

/** An item whose message may have gone out: `message` says why; the hint says how to find out. */
export function unknownOutcomeError(node: INode, itemIndex: number, message: string, cause?: GatewayFailure) {
	return asNodeError(node, new GatewayFailure({ kind: 'outcome-unknown', operation: 'smsSend', message, httpStatus: cause?.httpStatus, hint: UNKNOWN_OUTCOME_HINT }), itemIndex);
}


const byItem = <T>(entries: Map<number, T>) => [...entries].sort(([a], [b]) => a - b);

/**
 * The error that stopped a batch, naming the items already sent and every item whose outcome is
 * unknown: their records stay, so a retried execution sends only the rest.
 */
export function stoppedBatchError(error: unknown, sent: Map<number, string>, unknown: Map<number, string>, repeatWindowMinutes: number): unknown {
	if (!(error instanceof Error) || (sent.size === 0 && unknown.size === 0)) return error;
	const retried = repeatWindowMinutes > 0 ? 'not sent again when the execution is retried' : 'a retried execution sends them again, as the repeat window is 0';
	const notes: string[] = [];
	if (sent.size > 0) {
		notes.push(`[already sent, and ${retried}: ${byItem(sent).map(([itemIndex, taskId]) => `item ${itemIndex + 1} (task ${taskId})`).join(', ')}]`);
	}
	if (unknown.size > 0) {
		const items = byItem(unknown).map(([itemIndex, phone]) => `item ${itemIndex + 1} (${phone})`);
		notes.push(`[outcome unknown, may have been sent; they stay recorded, so ${retried.replace('them', 'these')}: ${items.join(', ')}]`);
	}
	error.message = `${error.message} ${notes.join(' ')}`;
	return error;
}

/** Adds to the error that stopped a batch what a failed release of the unstarted items left in the store. */
export function withUnreleased(error: unknown, failure: RecordsFailure, repeatWindowMinutes: number): unknown {
	return describeMore(error, `The records of the items not started could not be released (${failure.reason}). ${keptRecordsText(failure, repeatWindowMinutes)}`);
}

/** The run's hint when items were sent but could not be marked so. */
export function unmarkedText(failure: RecordsFailure): string {
	const items = failure.kept.unknown.map((itemIndex) => itemIndex + 1).join(', ');
	return `Items ${items} were sent, but ${failure.store} did not confirm recording it (${failure.reason}): their records say "sent" or stay "outcome unknown", so no execution sends them again within the repeat window; in the second case a re-run of this execution reports them as unknown instead of handing back their task IDs.`;
}
