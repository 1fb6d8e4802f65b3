import type { IDataObject, INode } from 'n8n-workflow';

import { checkSendWindow, outsideWindow, windowText, type SendWindow, type WindowCheck } from '../../../../shared/checks/sendWindow';
import type { GuardScope } from '../../../../shared/store/guardScope';
import { firstEntry, optOutKeysOf } from '../../../../shared/store/optOutList';
import type { ClaimGate } from '../../../../shared/store/sendRecords/sendRecords';

/**
 * What must not leave (issue 41): a number on the account's opt-out list, and a message outside its
 * Send Window. Decided by `notLeaving` over the whole batch before it (guards.ts reads the list in
 * one store call; plan.ts reads the clock), and again by the same function for each message in its
 * claim's own store update, just before its paid call (leavingGate): a number opted out meanwhile
 * by another process is not texted, and a batch that runs past its window's end sends nothing
 * after it, at no extra store call. The budget needs no second look: the batch reserved every
 * message's price in the store before the first call (reserve.ts), so no other run can spend it.
 */

/** `opt-out-unreadable`: the number's entry holds something no Opt-Out > Add wrote; it is not texted, and says so as an error in every version. */
export type NotLeaving =
	| { reason: 'opted-out' }
	| { reason: 'opt-out-unreadable' }
	| { reason: 'outside-window'; window: SendWindow; check: Extract<WindowCheck, { inside: false }> };

/**
 * From SMS 1.5 a message that must not leave is an output item that says so (`sent: false` and
 * why), as a repeat is, and the others go out; earlier versions keep the item's error.
 */
export const SKIP_NOT_LEAVING_VERSION = 1.5;
export const skipsNotLeaving = (node: Pick<INode, 'typeVersion'>) => node.typeVersion >= SKIP_NOT_LEAVING_VERSION;

/** Whether a message may leave: its number's opt-out entry as the store holds it (any value keeps it from leaving), and the store's time. */
export function notLeaving(optOutEntry: string | undefined, now: number, window: SendWindow | undefined): NotLeaving | undefined {
	if (optOutEntry !== undefined) return Number.isFinite(Number(optOutEntry)) && optOutEntry.trim() !== '' ? { reason: 'opted-out' } : { reason: 'opt-out-unreadable' };
	if (!window) return undefined;
	const check = checkSendWindow(now, window);
	return check.inside ? undefined : { reason: 'outside-window', window, check };
}

/**
 * The same decision in the claim's store update, just before the paid call: the number's entries
 * under every scope of the account in the store in use (an earlier store is read-only: the batch's
 * read covered it).
 */
export function leavingGate(optOuts: GuardScope, phone: string, window: SendWindow | undefined): ClaimGate<NotLeaving> {
	const keys = optOutKeysOf(optOuts, phone);
	return { keys, stop: (value, now) => notLeaving(firstEntry(keys.map(value)), now, window) };
}

/** Why the item was not sent, in words (an unreadable entry is an error: guards.ts). */
export function notLeavingText(why: Exclude<NotLeaving, { reason: 'opt-out-unreadable' }>, preview = false): string {
	if (why.reason === 'opted-out') {
		return preview
			? "the number is on this account's opt-out list: Send would skip it"
			: "the number is on this account's opt-out list (Opt-Out > Remove takes it off if the person asks for messages again)";
	}
	return `the send window ${windowText(why.window)} China time closed before this message left; it opens at ${why.check.opensAt}`;
}

/** The fields an item that was not sent carries (SMS 1.5): `sent: false`, why, and what a workflow routes by. */
export function notLeavingFields(why: Exclude<NotLeaving, { reason: 'opt-out-unreadable' }>, preview = false): IDataObject {
	if (why.reason === 'opted-out') return { sent: false, notSentBecause: notLeavingText(why, preview), optedOut: true };
	const { sent, ...window } = outsideWindow(why.window, why.check).json;
	return { sent, notSentBecause: notLeavingText(why), ...window };
}
