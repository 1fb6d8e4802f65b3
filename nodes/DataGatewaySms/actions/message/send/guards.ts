import { NodeOperationError, type IDataObject, type INode } from 'n8n-workflow';

import { reviewMessageText, reviewSignatureName, type ContentFinding } from '../../../../shared/checks/content';
import { checkSendWindow, outsideWindow, readSendWindow, type SendWindow } from '../../../../shared/checks/sendWindow';
import { inputError } from '../../../../shared/errors/failures';
import type { DurableStore } from '../../../../shared/store/durableStore';
import { optOutKey, readOptOuts } from '../../../../shared/store/optOutList';
import { notLeaving, skipsNotLeaving, type NotLeaving } from './leaving';
import type { SendPlan, SendRun } from './sendRun';

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

/**
 * Items whose number is on the account's opt-out list, and the list's entries read for the others
 * (absent: not listed): one store read for the run, however often a number repeats.
 */
export async function optedOutItems(node: INode, store: DurableStore, account: string, phones: Map<number, string>): Promise<{ optedOut: Set<number>; unlisted: string[] }> {
	const optedOut = new Set<number>();
	if (phones.size === 0) return { optedOut, unlisted: [] };
	const listed = await readOptOuts(store, account, [...phones.values()]).catch((error: unknown) => Promise.reject(optOutListUnavailable(node, store, error)));
	for (const [itemIndex, phone] of phones) if (notLeaving(listed.has(phone) ? String(listed.get(phone)) : undefined, 0, undefined)) optedOut.add(itemIndex);
	return { optedOut, unlisted: [...new Set(phones.values())].filter((phone) => !listed.has(phone)) };
}

/**
 * The beforeCalls step of the send operations: opted-out numbers are taken out first (SMS 1.5:
 * skipped, kept in `run.notLeaving` for the send step; earlier versions: refused), then the rest go
 * to `reserve` (records, limits, cap), so an opted-out item is never recorded or counted. Items
 * already sent in this run (Retry On Fail) stand as sent.
 */
export async function refuseOptedOutThenReserve(
	run: SendRun,
	plans: Map<number, SendPlan>,
	reserve: (plans: Map<number, SendPlan>) => Promise<Map<number, unknown>>,
): Promise<Map<number, unknown>> {
	const fresh = new Map([...plans].filter(([, plan]) => !plan.earlier).map(([itemIndex, plan]) => [itemIndex, plan.phone]));
	const { optedOut, unlisted } = await optedOutItems(run.node, run.records.store, run.client.accountKey, fresh);
	// Each claim reads its number's entry again: on Redis it guesses what this read found.
	run.records.readBefore(unlisted.map((phone) => optOutKey(run.client.accountKey, phone)), unlisted.map(() => undefined));
	const refused = new Map<number, unknown>();
	for (const itemIndex of optedOut) {
		if (skipsNotLeaving(run.node)) run.notLeaving.set(itemIndex, { reason: 'opted-out' });
		else refused.set(itemIndex, optedOutError(run.node, itemIndex, fresh.get(itemIndex) as string));
	}
	const rest = new Map([...plans].filter(([itemIndex]) => !optedOut.has(itemIndex)));
	for (const [itemIndex, error] of await reserve(rest)) refused.set(itemIndex, error);
	return refused;
}

/** What an item that must not leave is before SMS 1.5: its error, as when it was refused before the batch. */
export function notLeavingError(node: INode, itemIndex: number, phone: string, why: NotLeaving): NodeOperationError {
	if (why.reason === 'opted-out') return optedOutError(node, itemIndex, phone);
	return outsideWindowError(node, itemIndex, why.window, why.check);
}

/** The store's clock, read once per run and only when an item has a window. */
const clockOfRun = new WeakMap<SendRun, Promise<number>>();

/**
 * Refuses the item when Options > Send Window is set and the store's clock is outside it. The error
 * says when the window opens; its `details` (errorItems.ts) carry `opensAt` for a Wait node.
 * Returns the window, which each message's claim checks again as it leaves.
 */
export async function refuseOutsideWindow(run: SendRun, itemIndex: number, sendOptions: IDataObject): Promise<SendWindow | undefined> {
	const reading = readSendWindow(sendOptions);
	if (reading.problem) throw inputError(run.ctx.getNode(), itemIndex, reading.problem.field, reading.problem.problem, reading.problem.fix);
	if (!reading.window) return undefined;
	let now = clockOfRun.get(run);
	if (!now) clockOfRun.set(run, (now = run.records.store.now()));
	const nowMs = await now.catch((error: unknown) => {
		const reason = error instanceof Error ? error.message : String(error);
		throw inputError(run.ctx.getNode(), itemIndex, 'Send Window', `could not be checked: the clock of ${run.records.store.label} could not be read (${reason})`, 'Fix the store named, or remove Send Window from Options.');
	});
	const check = checkSendWindow(nowMs, reading.window);
	if (check.inside) return reading.window;
	throw outsideWindowError(run.node, itemIndex, reading.window, check);
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
export function reviewSentMessage(signature: string | undefined, message: string): { refusals: MessageFinding[]; warnings: MessageFinding[] } {
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

/** The refusal's words: every finding, and what to do; `warnings` when Refuse Content Warnings asked for it. */
export function contentRefusalText(findings: MessageFinding[], warnings: boolean): { field: string; problem: string; fix: string } {
	const fields = [...new Set(findings.map(({ field }) => field))];
	const problem = findings.map(({ field, finding }) => (fields.length > 1 ? `${field} ${finding.problem}` : finding.problem)).join('; ');
	const fixes = [...new Set(findings.map(({ finding }) => finding.fix))].join(' ');
	const why = warnings ? ' Options > Refuse Content Warnings is on; turn it off to send such messages anyway.' : '';
	return { field: fields.length === 1 ? fields[0] : 'Message', problem, fix: `${fixes}${why}` };
}
