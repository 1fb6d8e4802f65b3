import { NodeOperationError, type IDataObject, type INode } from 'n8n-workflow';

import { reviewMessageText, type ContentFinding } from '../../../../shared/checks/content';
import { checkSendWindow, outsideWindow, readSendWindow } from '../../../../shared/checks/sendWindow';
import { inputError } from '../../../../shared/errors/failures';
import type { GuardAccount } from '../../../../shared/gateway/accountScope';
import type { DurableStore } from '../../../../shared/store/durableStore';
import { openGuardScope } from '../../../../shared/store/guardScope';
import { readOptOuts } from '../../../../shared/store/optOutList';
import type { SendPlan, SendRun } from './sendRun';

/**
 * The guards of issue 34 that refuse an item of Send (and Send and Check Delivery) before anything
 * is recorded, counted or paid: the opt-out list (once per run, over every item: optOutRefusals),
 * the Send Window and Refuse Content Warnings (per item, in plan.ts).
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

/** Items whose number is on the account's opt-out list, each with its refusal: one store read for the run. */
export async function optOutRefusals(node: INode, store: DurableStore, account: GuardAccount, phones: Map<number, string>, preview = false): Promise<Map<number, unknown>> {
	const refused = new Map<number, unknown>();
	if (phones.size === 0) return refused;
	const read = async () => await readOptOuts(await openGuardScope(store, account, 'send'), [...phones.values()]);
	const listed = await read().catch((error: unknown) => Promise.reject(optOutListUnavailable(node, store, error)));
	for (const [itemIndex, phone] of phones) if (listed.has(phone)) refused.set(itemIndex, optedOutError(node, itemIndex, phone, preview));
	return refused;
}

/**
 * The beforeCalls step of the send operations: opted-out numbers are refused first, then the rest
 * go to `reserve` (records, limits, cap), so a refused item is never recorded or counted. Items
 * already sent in this run (Retry On Fail) stand as sent.
 */
export async function refuseOptedOutThenReserve(
	run: SendRun,
	plans: Map<number, SendPlan>,
	reserve: (plans: Map<number, SendPlan>) => Promise<Map<number, unknown>>,
): Promise<Map<number, unknown>> {
	const fresh = new Map([...plans].filter(([, plan]) => !plan.earlier).map(([itemIndex, plan]) => [itemIndex, plan.phone]));
	const refused = await optOutRefusals(run.ctx.getNode(), run.records.store, run.client.guard, fresh);
	const rest = new Map([...plans].filter(([itemIndex]) => !refused.has(itemIndex)));
	for (const [itemIndex, error] of await reserve(rest)) refused.set(itemIndex, error);
	return refused;
}

/** The store's clock, read once per run and only when an item has a window. */
const clockOfRun = new WeakMap<SendRun, Promise<number>>();

/**
 * Refuses the item when Options > Send Window is set and the store's clock is outside it. The error
 * says when the window opens; its `details` (errorItems.ts) carry `opensAt` for a Wait node.
 */
export async function refuseOutsideWindow(run: SendRun, itemIndex: number, sendOptions: IDataObject): Promise<void> {
	const reading = readSendWindow(sendOptions);
	if (reading.problem) throw inputError(run.ctx.getNode(), itemIndex, reading.problem.field, reading.problem.problem, reading.problem.fix);
	if (!reading.window) return;
	let now = clockOfRun.get(run);
	if (!now) clockOfRun.set(run, (now = run.records.store.now()));
	const nowMs = await now.catch((error: unknown) => {
		const reason = error instanceof Error ? error.message : String(error);
		throw inputError(run.ctx.getNode(), itemIndex, 'Send Window', `could not be checked: the clock of ${run.records.store.label} could not be read (${reason})`, 'Fix the store named, or remove Send Window from Options.');
	});
	const check = checkSendWindow(nowMs, reading.window);
	if (check.inside) return;
	const outside = outsideWindow(reading.window, check);
	const error = new NodeOperationError(run.ctx.getNode(), `Item ${itemIndex + 1}: ${outside.message}`, { description: outside.description, itemIndex });
	error.context.details = outside.json;
	throw error;
}

/** What Refuse Content Warnings stops: every finding on the message as the gateway gets it (signature, and template with the item's values). */
export function blockingContent(signature: string | undefined, message: string): ContentFinding[] {
	const reviews = [...(signature ? [reviewMessageText(signature)] : []), reviewMessageText(message)];
	return reviews.flatMap((review) => [...review.refusals, ...review.warnings]);
}

/** The refusal's words: every finding, and what to do. */
export function contentRefusalText(findings: ContentFinding[]): { problem: string; fix: string } {
	const problem = findings.map((finding) => finding.problem).join('; ');
	const fix = `${[...new Set(findings.map((finding) => finding.fix))].join(' ')} Options > Refuse Content Warnings is on; turn it off to send such messages anyway.`;
	return { problem, fix };
}
