import { limitProblem, type CountWindow, type SendDecision } from './rules';
import type { MessageRecord, SendState, StagedValues } from './recordValues';

/**
 * The decisions of the send records, pure (a store may run them more than once per update): each
 * takes the staged values of one update and changes them. Each is safe to run again after an
 * update whose answer was lost: a record carrying this run's token is this run's own earlier
 * write, so the second run of a decision finds its work done and changes nothing.
 */

/** The keys of one item's send in this run. */
export interface ItemKeys {
	itemIndex: number;
	phone?: string;
	sendKey: string;
	/** Absent when the repeat window is 0: nothing keeps the message. */
	messageKey?: string;
	/** One per window, as they were when the batch read the store's clock. */
	windows: CountWindow[];
	countKeys: string[];
}

/** What every decision of one node run knows. */
export interface RunIdentity {
	token: string;
	execution: string;
	/** The repeat window, 0 when off. */
	windowMs: number;
	/** How long a send record lasts: longer than the repeat window and any retry of the execution. */
	sendTtlMs: number;
}

/** Takes a holder out of a message (another execution takes its send over), giving back its current counts. */
function evict(values: StagedValues, run: RunIdentity, messageKey: string, message: MessageRecord, holderKey: string) {
	const holder = message.holders[holderKey];
	delete message.holders[holderKey];
	values.setMessage(messageKey, message, run.windowMs);
	// A count not named in this update is of a window that has ended: it limits nothing any more.
	for (const key of holder?.counted ?? []) if (values.has(key)) values.addToCount(key, -1);
}

/** The first window at its limit, or undefined. */
const fullWindow = (values: StagedValues, item: ItemKeys) => item.windows.find((window, index) => values.count(item.countKeys[index]) >= window.allowed);

function take(values: StagedValues, run: RunIdentity, item: ItemKeys, message: MessageRecord | undefined, state: SendState) {
	for (const key of item.countKeys) values.addToCount(key, 1);
	values.setSend(item.sendKey, { state, token: run.token, counted: item.countKeys }, run.sendTtlMs);
	if (item.messageKey) {
		const kept = message && message.execution === run.execution ? message : { execution: run.execution, holders: {} };
		kept.holders[item.sendKey] = { state, counted: item.countKeys };
		values.setMessage(item.messageKey, kept, run.windowMs);
	}
}

/**
 * One item, in item order: an earlier try of this very item decides (sent or unknown: handed
 * back; only reserved: taken over); then the repeat window (another execution's message is a
 * repeat unless every send of it is only reserved, as by a run that stopped before starting them:
 * this run takes them over); then the per-number limits; then the send is reserved.
 */
export function decideReserve(values: StagedValues, run: RunIdentity, item: ItemKeys): SendDecision {
	const earlier = values.send(item.sendKey);
	let message = item.messageKey ? values.message(item.messageKey) : undefined;
	if (earlier && earlier.token === run.token && earlier.state === 'reserved') return { kind: 'send' };
	if (earlier && earlier.state !== 'reserved') return { kind: 'earlier', outcome: earlier.state, taskId: earlier.taskId };
	if (earlier) {
		// A reservation of this item by an earlier try that ended before sending it.
		if (item.messageKey && message?.holders[item.sendKey]) evict(values, run, item.messageKey, message, item.sendKey);
		else for (const key of earlier.counted) if (values.has(key)) values.addToCount(key, -1);
		values.setSend(item.sendKey, undefined, run.sendTtlMs);
	}
	if (item.messageKey && message && message.execution !== run.execution) {
		if (Object.values(message.holders).some((holder) => holder.state !== 'reserved')) return { kind: 'repeat' };
		for (const holderKey of Object.keys(message.holders)) evict(values, run, item.messageKey, message, holderKey);
		message = undefined;
	}
	const full = fullWindow(values, item);
	if (full) return { kind: 'limit', problem: limitProblem(item.phone, full) };
	take(values, run, item, message, 'reserved');
	return { kind: 'send' };
}

/**
 * Just before the paid call: reserved → outcome unknown. `taken` when another execution took the
 * message over meanwhile (it sends it); `limit` when the send had lost its reservation and the
 * counts are full now. Reads the counts only in that last case (a claim's first try names none).
 */
export function decideClaim(values: StagedValues, run: RunIdentity, item: ItemKeys): 'go' | 'taken' | { limit: string } {
	const own = values.send(item.sendKey);
	if (!own || own.token !== run.token) return 'taken';
	if (own.state !== 'reserved') return 'go';
	if (!item.messageKey) {
		values.setSend(item.sendKey, { ...own, state: 'unknown' }, run.sendTtlMs);
		return 'go';
	}
	const message = values.message(item.messageKey);
	if (message?.holders[item.sendKey]) {
		message.holders[item.sendKey].state = 'unknown';
		values.setMessage(item.messageKey, message, run.windowMs);
		values.setSend(item.sendKey, { ...own, state: 'unknown' }, run.sendTtlMs);
		return 'go';
	}
	if (message && message.execution !== run.execution) {
		values.setSend(item.sendKey, undefined, run.sendTtlMs);
		return 'taken';
	}
	// Evicted, and the one who evicted let go again (or the window passed): take it anew.
	const full = fullWindow(values, item);
	if (full) {
		values.setSend(item.sendKey, undefined, run.sendTtlMs);
		return { limit: limitProblem(item.phone, full) };
	}
	take(values, run, item, message, 'unknown');
	return 'go';
}

/** Gives back what this run's send took: it certainly failed or never started. Idempotent. */
export function decideRelease(values: StagedValues, run: RunIdentity, item: ItemKeys): void {
	const own = values.send(item.sendKey);
	if (!own || own.token !== run.token) return;
	let counted = true;
	if (item.messageKey) {
		const message = values.message(item.messageKey);
		// Held by another execution without this send: the one who took it over gave the counts back.
		counted = !message || message.holders[item.sendKey] !== undefined;
		if (message?.holders[item.sendKey]) {
			delete message.holders[item.sendKey];
			values.setMessage(item.messageKey, message, run.windowMs);
		}
	}
	if (counted) for (const key of own.counted) if (values.has(key)) values.addToCount(key, -1);
	values.setSend(item.sendKey, undefined, run.sendTtlMs);
}

/** Outcome unknown → sent, with the task ID, once the gateway took it. Reads no counts (its update names none). */
export function decideSent(values: StagedValues, run: RunIdentity, item: ItemKeys, taskId: string | null): void {
	const own = values.send(item.sendKey);
	if (!own || own.token !== run.token || own.state !== 'unknown') return;
	values.setSend(item.sendKey, { ...own, state: 'sent', taskId }, run.sendTtlMs);
	if (!item.messageKey) return;
	const message = values.message(item.messageKey);
	if (!message?.holders[item.sendKey]) return;
	message.holders[item.sendKey].state = 'sent';
	values.setMessage(item.messageKey, message, run.windowMs);
}
