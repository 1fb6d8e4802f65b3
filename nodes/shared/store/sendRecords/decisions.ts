import { valueTag } from '../keyName';
import { limitProblem, type CountWindow, type SendDecision } from './rules';
import { readMessage, type Holder, type MessageRecord, type SendRecord, type SendState, type StagedValues } from './recordValues';

/**
 * The decisions of the send records, pure (a store may run them more than once per update): each
 * takes the staged values of one update and changes them. Each is safe to run again after an
 * update whose answer was lost: a record carrying this run's token is this run's own earlier
 * write, so the second run of a decision finds its work done and changes nothing.
 *
 * A message's record lists its holders: the sends of it that are reserved, started or sent, each
 * with its run's token, its execution, the counts it took and (started or sent) when, at the
 * store's time: the repeat window counts from then. A holder that is only reserved may
 * be taken over by another execution (its run stopped before sending, or its worker died): the
 * taker gives its counts back. Every decision finds its own send by its token, in the send's own
 * record or, when that is gone (evicted, or lost with a Redis restart), in the message's holders.
 */

/** The keys of one item's send in this run. */
export interface ItemKeys {
	itemIndex: number;
	phone?: string;
	sendKey: string;
	messageKey: string;
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

/**
 * How long a message's record lasts: the repeat window (without one, as long as a send record);
 * while a send of it is only reserved, at least as long as a send record, so that a crashed run's
 * reservation is still taken over, with its counts, when its execution is retried after the window.
 */
function messageTtl(run: RunIdentity, message: MessageRecord): number {
	const reserved = Object.values(message.holders).some((holder) => holder.state === 'reserved');
	return run.windowMs > 0 && !reserved ? run.windowMs : Math.max(run.windowMs, run.sendTtlMs);
}

const executionOf = (message: MessageRecord, holder: Holder) => holder.execution ?? message.execution;

/**
 * The message's record where a decision looks for its own send whose record is gone. Unreadable,
 * it holds nothing this run can find: the decision then has nothing to change, as before it looked.
 */
// Stryker disable BlockStatement: an empty catch returns undefined as well
function messageWithout(values: StagedValues, item: ItemKeys): MessageRecord | undefined {
	const value = values.current(item.messageKey);
	try {
		return readMessage(item.messageKey, value);
	} catch {
		return undefined;
	}
}
// Stryker restore BlockStatement

/** This run's holder of the item's message, if the message still has it. */
function ownHolder(run: RunIdentity, item: ItemKeys, own: SendRecord | undefined, message: MessageRecord | undefined): Holder | undefined {
	const holder = message?.holders[item.sendKey];
	return holder && (holder.token ?? own?.token) === run.token ? holder : undefined;
}

function saveMessage(values: StagedValues, run: RunIdentity, item: ItemKeys, message: MessageRecord) {
	values.setMessage(item.messageKey, message, messageTtl(run, message));
}

/** Takes a holder out of a message (another execution takes its send over), giving back its current counts. */
function evict(values: StagedValues, run: RunIdentity, item: ItemKeys, message: MessageRecord, holderKey: string) {
	const holder = message.holders[holderKey];
	delete message.holders[holderKey];
	saveMessage(values, run, item, message);
	// Stryker disable next-line OptionalChaining,ArrayDeclaration: every caller names a key the message holds, so the holder is there
	for (const key of values.taggedKeys(holder?.counted ?? [])) values.addToCount(key, -1);
}

const othersOf = (run: RunIdentity, message: MessageRecord) => Object.entries(message.holders).filter(([, holder]) => executionOf(message, holder) !== run.execution);

/** Whether another execution started or sent the message within the repeat window, counted from then (never with a window of 0). */
const startedElsewhere = (values: StagedValues, run: RunIdentity, message: MessageRecord | undefined) =>
	run.windowMs > 0 &&
	message !== undefined &&
	othersOf(run, message).some(([, holder]) => holder.state !== 'reserved' && (holder.at === undefined || values.now < holder.at + run.windowMs));

/** Takes over every send of the message another execution only reserved, giving its counts back. */
function takeOverReservations(values: StagedValues, run: RunIdentity, item: ItemKeys, message: MessageRecord | undefined) {
	if (!message) return;
	for (const [holderKey, holder] of othersOf(run, message)) if (holder.state === 'reserved') evict(values, run, item, message, holderKey);
}

/** The first window at its limit, or undefined. */
const fullWindow = (values: StagedValues, item: ItemKeys) => item.windows.find((window, index) => values.count(item.countKeys[index]) >= window.allowed);

function take(values: StagedValues, run: RunIdentity, item: ItemKeys, message: MessageRecord | undefined, state: SendState) {
	for (const key of item.countKeys) values.addToCount(key, 1);
	// Tags, not the keys: a count key holds the phone number.
	const counted = item.countKeys.map(valueTag);
	values.setSend(item.sendKey, { state, token: run.token, counted }, run.sendTtlMs);
	const kept = message ?? { execution: run.execution, holders: {} };
	// Another execution's sends that went out guard nothing for this one any more (past the window, or none) and hold no counts to give back.
	for (const [holderKey, holder] of othersOf(run, kept)) if (holder.state === 'sent') delete kept.holders[holderKey];
	kept.execution = run.execution;
	kept.holders[item.sendKey] = { state, counted, token: run.token, execution: run.execution, ...(state === 'reserved' ? {} : { at: values.now }) };
	saveMessage(values, run, item, kept);
}

/**
 * A reservation of this very item by another try (same execution, run and item) whose run ended
 * before sending it: given back. Without its holder, another execution took it over and gave its
 * counts back then: they are not given back twice, also once that message's record has expired
 * (a reservation's holder keeps its message as long as its own record, so only a take-over ends it first).
 */
function dropOtherTry(values: StagedValues, run: RunIdentity, item: ItemKeys, message: MessageRecord | undefined) {
	if (message?.holders[item.sendKey]) evict(values, run, item, message, item.sendKey);
	values.setSend(item.sendKey, undefined, run.sendTtlMs);
}

/**
 * One item, in item order: an earlier try of this very item decides (sent or unknown: handed
 * back; only reserved: taken over); then the repeat window (another execution's message is a
 * repeat unless every send of it is only reserved: this run takes those over); then the
 * per-number limits; then the send is reserved.
 */
export function decideReserve(values: StagedValues, run: RunIdentity, item: ItemKeys): SendDecision {
	const earlier = values.send(item.sendKey);
	const message = values.message(item.messageKey);
	if (earlier && earlier.token === run.token && earlier.state === 'reserved') return { kind: 'send' };
	if (earlier && earlier.state !== 'reserved') return { kind: 'earlier', outcome: earlier.state, taskId: earlier.taskId };
	if (earlier) dropOtherTry(values, run, item, message);
	if (startedElsewhere(values, run, message)) return { kind: 'repeat' };
	takeOverReservations(values, run, item, message);
	const full = fullWindow(values, item);
	if (full) return { kind: 'limit', problem: limitProblem(item.phone, full) };
	take(values, run, item, message, 'reserved');
	return { kind: 'send' };
}

/**
 * Just before the paid call: reserved → outcome unknown. When the reservation is gone (taken over
 * by another execution, or its keys vanished) the claim decides as a reserve does: `taken` when
 * another execution started the message (it sends it); else it takes the message back from
 * executions that only reserved it, so the first claim wins; `limit` when the counts are full
 * now. Reads the counts only in that case (a claim's first try names none).
 */
export function decideClaim(values: StagedValues, run: RunIdentity, item: ItemKeys): 'go' | 'taken' | { limit: string } {
	let own = values.send(item.sendKey);
	if (own && own.token === run.token && own.state !== 'reserved') return 'go';
	const message = values.message(item.messageKey);
	if (own && own.token !== run.token) {
		// Another try of this very item: it sends what it started; what it only reserved is taken back.
		if (own.state !== 'reserved') return 'taken';
		item.countKeys.forEach((key) => values.count(key));
		dropOtherTry(values, run, item, message);
		own = undefined;
	}
	const holder = ownHolder(run, item, own, message);
	if (holder && message) {
		holder.state = 'unknown';
		holder.at = values.now;
		saveMessage(values, run, item, message);
		values.setSend(item.sendKey, { state: 'unknown', token: run.token, counted: own?.counted ?? holder.counted }, run.sendTtlMs);
		return 'go';
	}
	// The reservation is gone: decided anew, as a reserve decides, with the counts.
	if (startedElsewhere(values, run, message)) {
		// Stryker disable next-line ConditionalExpression: without its own record there is nothing to delete (deleting an absent key changes nothing)
		if (own) values.setSend(item.sendKey, undefined, run.sendTtlMs);
		return 'taken';
	}
	// Stryker disable next-line ArrowFunction,CallExpression: fullWindow reads the same counts below before anything is decided (an update that names none fails there too); with no windows there are no counts
	item.countKeys.forEach((key) => values.count(key));
	takeOverReservations(values, run, item, message);
	const full = fullWindow(values, item);
	if (full) {
		// Stryker disable next-line ConditionalExpression: without its own record there is nothing to delete (deleting an absent key changes nothing)
		if (own) values.setSend(item.sendKey, undefined, run.sendTtlMs);
		return { limit: limitProblem(item.phone, full) };
	}
	take(values, run, item, message, 'unknown');
	return 'go';
}

/**
 * Gives back what this run's send took: it certainly failed or never started. Its counts stay
 * taken only when another execution took the send over (the taker gave them back). Idempotent.
 */
export function decideRelease(values: StagedValues, run: RunIdentity, item: ItemKeys): void {
	const own = values.send(item.sendKey);
	if (own && own.token !== run.token) return;
	const message = own ? values.message(item.messageKey) : messageWithout(values, item);
	const holder = ownHolder(run, item, own, message);
	// Stryker disable next-line ConditionalExpression: with neither its record nor its holder, the lines below change nothing either
	if (!own && !holder) return;
	if (holder && message) {
		delete message.holders[item.sendKey];
		saveMessage(values, run, item, message);
	}
	// A reservation without its holder was taken over, and the taker gave its counts back then (its
	// message outlives its own record, so one that is gone was taken over too: issue 41, item 4). A
	// started send is never taken over: its counts are its own, its message gone or written anew.
	// Stryker disable next-line OptionalChaining: without its own record it has its holder (else it returned above)
	const counted = holder !== undefined || own?.state !== 'reserved';
	// Stryker disable next-line OptionalChaining,ArrayDeclaration: without its own record it has its holder (else it returned above)
	if (counted) for (const key of values.taggedKeys(own?.counted ?? holder?.counted ?? [])) values.addToCount(key, -1);
	// Stryker disable next-line ConditionalExpression: without its own record there is nothing to delete (deleting an absent key changes nothing)
	if (own) values.setSend(item.sendKey, undefined, run.sendTtlMs);
}

/** Outcome unknown → sent, with the task ID, once the gateway took it. Reads no counts (its update names none). */
export function decideSent(values: StagedValues, run: RunIdentity, item: ItemKeys, taskId: string | null): void {
	const own = values.send(item.sendKey);
	if (own && (own.token !== run.token || own.state !== 'unknown')) return;
	const message = own ? values.message(item.messageKey) : messageWithout(values, item);
	const holder = ownHolder(run, item, own, message);
	if (!own && !holder) return;
	// Stryker disable next-line OptionalChaining,ArrayDeclaration: without its own record it has its holder (else it returned above)
	values.setSend(item.sendKey, { state: 'sent', token: run.token, counted: own?.counted ?? holder?.counted ?? [], taskId }, run.sendTtlMs);
	if (!holder || !message) return;
	// Kept as sent even with a window of 0: an execution this one took the message from tells by its absence that its counts went back.
	holder.state = 'sent';
	holder.at = values.now;
	saveMessage(values, run, item, message);
}
