import { NodeOperationError, type IDataObject, type IExecuteFunctions, type INode } from 'n8n-workflow';

import { reviewMessageText, reviewSignatureName, type ContentFinding } from '../../../../shared/checks/content';
import { checkSendWindow, outsideWindow, readSendWindow, type SendWindow } from '../../../../shared/checks/sendWindow';
import { inputError } from '../../../../shared/errors/failures';
import type { GuardAccount } from '../../../../shared/gateway/accountScope';
import type { DurableStore } from '../../../../shared/store/durableStore';
import { openGuardScope, type GuardScope } from '../../../../shared/store/guardScope';
import { optOutKeysOf, readOptOutEntries } from '../../../../shared/store/optOutList';
import type { SendRecords } from '../../../../shared/store/sendRecords/sendRecords';
import { noteSkipped } from '../../../../shared/usage/notes';
import { notLeaving, skipsNotLeaving, type NotLeaving } from './leaving';

/** What the guards take of a send run (sendRun.ts SendRun makes it): its node, records and opt-out list. */
export interface GuardedRun {
	readonly ctx: IExecuteFunctions;
	readonly node: INode;
	readonly records: Pick<SendRecords, 'readBefore' | 'store'>;
	/** SMS 1.5's items that must not leave, for the send step. */
	readonly notLeaving: Map<number, NotLeaving>;
	readonly optOuts: () => Promise<GuardScope>;
}

/** What the guards take of an item's plan: its number, and whether this run sent it already. */
interface GuardedPlan {
	phone: string;
	earlier?: unknown;
}

/**
 * The guards of issues 34 and 41 that stop an item of Send (and Send and Check Delivery) before
 * anything is recorded, counted or paid: the opt-out list (once per run, over every item:
 * optedOutItems), the Send Window and the content checks (per item, in plan.ts). leaving.ts decides
 * the list and the window again as each message leaves.
 */

/** Where the opt-out refusal tells the user to look. */
const OPT_OUT_FIX = 'The person asked not to be texted. Leave the item out; if they asked to receive messages again, remove the number with Opt-Out > Remove.';

/** An opted-out number's refusal: says so and how to remove it. `preview` words it as what Send would do. */
export function optedOutError(node: INode, itemIndex: number, phone: string, preview = false): NodeOperationError {
	const problem = `${phone} is on this account's opt-out list: ${preview ? 'Send would refuse it' : 'not sent'}`;
	return inputError(node, itemIndex, 'Phone Number', problem, OPT_OUT_FIX);
}

/** The list could not be read: nothing is sent, for an unread list could text a person who said no. */
export function optOutListUnavailable(node: INode, store: DurableStore, error: unknown): NodeOperationError {
	const reason = error instanceof Error ? error.message : String(error);
	const message = reason.includes(store.label) ? `SMS not sent: the opt-out list could not be read: ${reason}` : `SMS not sent: the opt-out list in ${store.label} could not be read: ${reason}`;
	const nodeError = new NodeOperationError(node, message, { description: 'Nothing was sent, recorded or counted: without the list a person who opted out could be texted. Fix the store named, then run again.' });
	nodeError.message = message;
	return nodeError;
}

/** An entry on the list that no Opt-Out > Add wrote: the number is not texted, and the error says what to check. */
export function unreadableOptOut(node: INode, itemIndex: number, phone: string, store: string): NodeOperationError {
	return inputError(node, itemIndex, 'Phone Number', `${phone} was not sent: its entry on this account's opt-out list in ${store} could not be read`, 'Run Opt-Out > Remove for the number, then Opt-Out > Add if the person opted out; check what else writes to that store.');
}

/** The account's opt-out list as a run reads it (store/guardScope.ts); a list that cannot be opened sends nothing. */
export async function openOptOuts(node: INode, store: DurableStore, account: GuardAccount): Promise<GuardScope> {
	return await openGuardScope(store, account, 'send').catch((error: unknown) => Promise.reject(optOutListUnavailable(node, store, error)));
}

/**
 * The opt-out list's entries of the items' numbers, decided by leaving.ts's notLeaving: one store
 * read for the run, however often a number repeats. `unlisted`: the numbers without an entry.
 */
export async function optedOutItems(node: INode, optOuts: GuardScope, phones: Map<number, string>): Promise<{ stopped: Map<number, NotLeaving>; unlisted: string[] }> {
	const stopped = new Map<number, NotLeaving>();
	const numbers = [...new Set(phones.values())];
	if (numbers.length === 0) return { stopped, unlisted: [] };
	const entryOf = await readOptOutEntries(optOuts, numbers).catch((error: unknown) => Promise.reject(optOutListUnavailable(node, optOuts.store, error)));
	for (const [itemIndex, phone] of phones) {
		const why = notLeaving(entryOf.get(phone), 0, undefined);
		if (why) stopped.set(itemIndex, why);
	}
	return { stopped, unlisted: numbers.filter((phone) => !entryOf.has(phone)) };
}

/**
 * The beforeCalls step of the send operations: opted-out numbers are taken out first (SMS 1.5:
 * skipped, kept in `run.notLeaving` for the send step; earlier versions: refused), then the rest go
 * to `reserve` (records, limits, cap), so an opted-out item is never recorded or counted. Items
 * already sent in this run (Retry On Fail) stand as sent.
 */
export async function refuseOptedOutThenReserve<Plan extends GuardedPlan>(
	run: GuardedRun,
	plans: Map<number, Plan>,
	reserve: (plans: Map<number, Plan>) => Promise<Map<number, unknown>>,
): Promise<Map<number, unknown>> {
	const fresh = new Map([...plans].filter(([, plan]) => !plan.earlier).map(([itemIndex, plan]) => [itemIndex, plan.phone]));
	// Nothing to send, nothing to read (the list opens, and its scope is first written, only for a send).
	const optOuts = fresh.size === 0 ? undefined : await run.optOuts();
	const { stopped, unlisted } = optOuts ? await optedOutItems(run.node, optOuts, fresh) : { stopped: new Map<number, NotLeaving>(), unlisted: [] };
	// Each claim reads its number's entries again: on Redis it guesses what this read found.
	const unlistedKeys = optOuts ? unlisted.flatMap((phone) => optOutKeysOf(optOuts, phone)) : [];
	run.records.readBefore(unlistedKeys, unlistedKeys.map(() => undefined));
	const refused = new Map<number, unknown>();
	for (const [itemIndex, why] of stopped) {
		if (why.reason === 'opted-out' && skipsNotLeaving(run.node)) run.notLeaving.set(itemIndex, why);
		else refused.set(itemIndex, notLeavingError(run.node, itemIndex, fresh.get(itemIndex) as string, why, run.records.store.label));
	}
	// SMS 1.5's skipped items are counted from the output (bill.ts smsTally); older versions refuse them.
	noteSkipped(run.ctx, 'optedOut', skipsNotLeaving(run.node) ? 0 : [...stopped.values()].filter((why) => why.reason === 'opted-out').length);
	const rest = new Map([...plans].filter(([itemIndex]) => !stopped.has(itemIndex)));
	for (const [itemIndex, error] of await reserve(rest)) refused.set(itemIndex, error);
	return refused;
}

/** What an item that must not leave is before SMS 1.5 (and an unreadable entry in every version): its error. */
export function notLeavingError(node: INode, itemIndex: number, phone: string, why: NotLeaving, store: string): NodeOperationError {
	if (why.reason === 'opted-out') return optedOutError(node, itemIndex, phone);
	if (why.reason === 'opt-out-unreadable') return unreadableOptOut(node, itemIndex, phone, store);
	return outsideWindowError(node, itemIndex, why.window, why.check);
}

/** The store's clock, read once per run and only when an item has a window. */
const clockOfRun = new WeakMap<GuardedRun, Promise<number>>();

/**
 * Refuses the item when Options > Send Window is set and the store's clock is outside it. The error
 * says when the window opens; its `details` (errorItems.ts) carry `opensAt` for a Wait node.
 * Returns the window, which each message's claim checks again as it leaves.
 */
export function refuseOutsideWindow(run: GuardedRun, itemIndex: number, sendOptions: IDataObject): SendWindow | undefined | Promise<SendWindow | undefined> {
	const reading = readSendWindow(sendOptions, run.node.typeVersion);
	if (reading.problem) throw inputError(run.ctx.getNode(), itemIndex, reading.problem.field, reading.problem.problem, reading.problem.fix);
	// Without a window, at once: a batch's checks take no turn of the event loop for it.
	return reading.window ? insideWindow(run, itemIndex, reading.window) : undefined;
}

/** The window checked against the store's clock, read once per run. */
async function insideWindow(run: GuardedRun, itemIndex: number, window: SendWindow): Promise<SendWindow> {
	let now = clockOfRun.get(run);
	if (!now) clockOfRun.set(run, (now = run.records.store.now()));
	const nowMs = await now.catch((error: unknown) => {
		const reason = error instanceof Error ? error.message : String(error);
		throw inputError(run.ctx.getNode(), itemIndex, 'Send Window', `could not be checked: the clock of ${run.records.store.label} could not be read (${reason})`, 'Fix the store named, or remove Send Window from Options.');
	});
	const check = checkSendWindow(nowMs, window);
	if (check.inside) return window;
	noteSkipped(run.ctx, 'outsideWindow');
	throw outsideWindowError(run.node, itemIndex, window, check);
}

function outsideWindowError(node: INode, itemIndex: number, window: SendWindow, check: Extract<ReturnType<typeof checkSendWindow>, { inside: false }>): NodeOperationError {
	const outside = outsideWindow(window, check);
	const error = new NodeOperationError(node, `Item ${itemIndex + 1}: ${outside.message}`, { description: outside.description, itemIndex });
	error.context.details = outside.json;
	return error;
}

/** A finding of the content checks on a message, with the part of the message it is in. */
export interface MessageFinding {
	field: 'Signature' | 'Message';
	finding: ContentFinding;
}

/**
 * The content checks of a message as the gateway gets it, one review for Send and Preview: the
 * signature (its wording, and the signature rules) and the template with the item's values.
 * Refusals are what the gateway names as forbidden (links to app test-distribution sites): Send
 * refuses them by default from SMS 1.5. Warnings are for people to judge; Refuse Content Warnings
 * refuses them too. The signature rules are warnings here: the gateway approved the signature.
 */
function reviewSentMessage(signature: string | undefined, message: string): { refusals: MessageFinding[]; warnings: MessageFinding[] } {
	const tagged = (field: MessageFinding['field'], findings: ContentFinding[]) => findings.map((finding) => ({ field, finding }));
	const signatureText = signature ? reviewMessageText(signature) : { refusals: [], warnings: [] };
	const signatureName = signature ? reviewSignatureName(signature) : { refusals: [], warnings: [] };
	const seen = new Set(signatureText.warnings.map((finding) => finding.problem));
	const signatureWarnings = [...signatureText.warnings, ...[...signatureName.refusals, ...signatureName.warnings].filter((finding) => !seen.has(finding.problem))];
	const text = reviewMessageText(message);
	return {
		refusals: [...tagged('Signature', signatureText.refusals), ...tagged('Message', text.refusals)],
		warnings: [...tagged('Signature', signatureWarnings), ...tagged('Message', text.warnings)],
	};
}

/**
 * The content reviews of one run: the last message's review is reused while the next message is the
 * same (a template without variables, or with the same values, is reviewed once per batch, not per
 * item). Only the last text is held, and only for the run.
 */
export class ContentReviews {
	private last?: { signature: string | undefined; message: string; review: ReturnType<typeof reviewSentMessage> };

	review(signature: string | undefined, message: string): ReturnType<typeof reviewSentMessage> {
		const last = this.last;
		if (last !== undefined && last.signature === signature && last.message === message) return last.review;
		const review = reviewSentMessage(signature, message);
		this.last = { signature, message, review };
		return review;
	}
}

/** The refusal's words: every finding, and what to do; `warnings` when Refuse Content Warnings asked for it. */
export function contentRefusalText(findings: MessageFinding[], warnings: boolean): { field: string; problem: string; fix: string } {
	const fields = [...new Set(findings.map(({ field }) => field))];
	const problem = findings.map(({ field, finding }) => (fields.length > 1 ? `${field} ${finding.problem}` : finding.problem)).join('; ');
	const fixes = [...new Set(findings.map(({ finding }) => finding.fix))].join(' ');
	const why = warnings ? ' Options > Refuse Content Warnings is on; turn it off to send such messages anyway.' : '';
	return { field: fields.length === 1 ? fields[0] : 'Message', problem, fix: `${fixes}${why}` };
}
