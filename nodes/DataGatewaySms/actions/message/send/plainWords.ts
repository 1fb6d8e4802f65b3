import type { IDataObject, IExecuteFunctions, INode } from 'n8n-workflow';

import { plural } from '../../../../shared/output/plural';
import { notLeavingFields } from './leaving';
import type { SendOutcome } from './sendRun';

/**
 * From SMS 1.4 an item says in plain words whether its message went out: `sent`, and
 * `sentEarlierInThisRun` on a Retry On Fail re-run, replace `skippedAsRepeat` and `deduplicated`,
 * which a user could not read without the docs. Nodes saved with 1.3 or earlier keep the old keys.
 */
export const PLAIN_WORDS_VERSION = 1.4;

/** From the run's node when the caller has it: n8n's getNode() deep-copies the node at every call. */
export const inPlainWords = (from: IExecuteFunctions | Pick<INode, 'typeVersion'>) => ('getNode' in from ? from.getNode() : from).typeVersion >= PLAIN_WORDS_VERSION;

/** Why a repeat was not sent, as the item says it. */
export const repeatReason = (minutes: number) =>
	`an earlier execution sent the same message (number, signature, template, variables) within the Repeat Window of ${plural(minutes, 'minute')}`;

/** A send's outcome as the item shows it, in the node's version. */
export function outcomeFields(from: IExecuteFunctions | Pick<INode, 'typeVersion'>, outcome: SendOutcome, repeatWindowMinutes: number): IDataObject {
	if (!inPlainWords(from)) return { ...outcome } as IDataObject;
	const { taskId, deduplicated, skippedAsRepeat, notLeaving, ...rest } = outcome;
	return {
		taskId,
		sent: !skippedAsRepeat,
		sentEarlierInThisRun: deduplicated,
		...(skippedAsRepeat ? { notSentBecause: repeatReason(repeatWindowMinutes) } : {}),
		...(notLeaving && notLeaving.reason !== 'opt-out-unreadable' ? notLeavingFields(notLeaving) : {}),
		...rest,
	} as IDataObject;
}

/** Send and Check Delivery's `outcome` of a send that did not go out: a repeat, or (SMS 1.5) a message that must not leave. */
export function notSentOutcome(ctx: IExecuteFunctions, outcome: SendOutcome): string | undefined {
	if (outcome.notLeaving) return outcome.notLeaving.reason === 'opted-out' ? 'not sent (opted out)' : 'not sent (outside send window)';
	if (outcome.skippedAsRepeat) return inPlainWords(ctx) ? 'not sent (repeat)' : 'skippedAsRepeat';
	return undefined;
}
