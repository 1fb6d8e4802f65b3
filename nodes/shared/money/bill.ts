/**
 * The bill at a glance: after each run a node tells, in n8n's execution hints above its output,
 * what the run paid for. Calls are counted as they succeed; items are read from the node's output.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { priceOf, roundYuan } from './spend';
import type { OperationName } from '../gateway/catalog';
import { plural } from '../output/plural';

/** What one run of one node called; keyed by the run's context object, so it ends with the run. */
interface Tally {
	calls: number;
	/** Set by operations that know their reuse themselves (paged listings); else derived from the items. */
	reused?: number;
	/** Input items answered, when the output does not show them all (Only New leaves some out). */
	answered?: number;
	/** Distinct questions answered from an earlier execution (Reuse Answers For) instead of a call. */
	earlier?: number;
	/** Only New: input items checked, and how many had news. */
	news?: { checked: number; withNews: number; words: NewsWords };
	/** Further parts of the line, such as the day's telephone count. */
	notes?: string[];
	/** The budgets' line: "Budget: 12.40 of 50.00 yuan today (China time)". */
	budget?: string;
}

/** "12 plates checked, 2 with new violations": the checked noun (one, many) and what news is called. */
export interface NewsWords {
	checked: [string, string];
	withNews: string;
}

const tallies = new WeakMap<IExecuteFunctions, Tally>();

function tallyOf(ctx: IExecuteFunctions): Tally {
	let tally = tallies.get(ctx);
	if (!tally) {
		tally = { calls: 0 };
		tallies.set(ctx, tally);
	}
	return tally;
}

/** Counts one gateway call that succeeded (and so is billed, for a paid operation). */
export function countCall(ctx: IExecuteFunctions): void {
	tallyOf(ctx).calls++;
}

/** Makes the call and counts it once it succeeded. */
export async function countedCall<T>(ctx: IExecuteFunctions, call: () => Promise<T>): Promise<T> {
	const result = await call();
	countCall(ctx);
	return result;
}

/** Counts an answer reused from earlier in the execution instead of a new call. */
export function countReused(ctx: IExecuteFunctions): void {
	const tally = tallyOf(ctx);
	tally.reused = (tally.reused ?? 0) + 1;
}

/** What a lookup run knows about itself beyond its calls; see Tally. */
export function noteLookupRun(ctx: IExecuteFunctions, note: Pick<Tally, 'answered' | 'earlier' | 'news' | 'notes'>): void {
	Object.assign(tallyOf(ctx), note);
}

/** The budgets' line for the run's bill (money/refusals.ts budgetLine), when the credential has a budget. */
export function noteBudget(ctx: IExecuteFunctions, line: string | undefined): void {
	if (line) tallyOf(ctx).budget = line;
}

/** An item that reports a failed input item under Continue On Fail (n8n/errorItems.ts errorItem). */
export const isErrorItem = (item: INodeExecutionData) => item.error !== undefined || (item.json.error !== undefined && Object.keys(item.json).every((key) => ['error', 'errorDescription', 'gatewayCode', 'message', 'details'].includes(key)));

/** Input items that got an answer, and input items that failed. */
export function countItems(items: INodeExecutionData[]) {
	const inputIndex = (item: INodeExecutionData, index: number) => {
		const paired = Array.isArray(item.pairedItem) ? item.pairedItem[0] : item.pairedItem;
		return typeof paired === 'number' ? paired : (paired?.item ?? index);
	};
	// One flag byte per input item rather than sets: this runs over every item of a run, twice.
	let size = 0;
	items.forEach((item, index) => (size = Math.max(size, inputIndex(item, index) + 1)));
	const ANSWERED = 1;
	const FAILED = 2;
	const seen = new Uint8Array(size);
	items.forEach((item, index) => (seen[inputIndex(item, index)] |= isErrorItem(item) ? FAILED : ANSWERED));
	let answered = 0;
	let failed = 0;
	for (const flags of seen) {
		if (flags & ANSWERED) answered++;
		if (flags & FAILED) failed++;
	}
	return { answered, failed };
}

/** What repeated items are called in the reuse part of a lookup's bill: one, then several. */
const REPEATED: Partial<Record<OperationName, [string, string]>> = {
	telephoneIdentify: ['repeated number', 'repeated numbers'],
	violationQuery: ['repeated plate', 'repeated plates'],
	vehicleDetail: ['repeated vehicle', 'repeated vehicles'],
	enterpriseDetail: ['repeated company', 'repeated companies'],
	enterpriseCopyright: ['page', 'pages'],
};

/**
 * The bill of a lookup run: "5 paid calls, 0.2 yuan; 3 answers reused from earlier runs, 1.05 yuan not
 * spent; 3 repeated plates answered without a new call; 12 plates checked, 2 with new violations".
 */
export function lookupBill(
	operation: OperationName,
	calls: number,
	reused: number,
	failed: number,
	extra: Pick<Tally, 'earlier' | 'news' | 'notes'> = {},
): string {
	const price = priceOf(operation);
	const parts = [
		price > 0
			? `${plural(calls, 'paid call')}, ${roundYuan(calls * price)} yuan`
			: operation === 'telephoneIdentify'
				? `${plural(calls, 'free call')}, 0 yuan (within the gateway's daily free quota)`
				: `${plural(calls, 'free call')}, 0 yuan`,
	];
	if (extra.earlier) {
		parts.push(`${plural(extra.earlier, 'answer')} reused from earlier runs${price > 0 ? `, ${roundYuan(extra.earlier * price)} yuan not spent` : ''}`);
	}
	if (reused > 0) parts.push(`${plural(reused, ...(REPEATED[operation] ?? ['repeated item', 'repeated items']))} answered without a new call`);
	if (extra.news) {
		const { checked, withNews, words } = extra.news;
		parts.push(`${plural(checked, ...words.checked)} checked, ${withNews} ${words.withNews}`);
	}
	if (failed > 0) parts.push(`${plural(failed, 'item')} failed`);
	parts.push(...(extra.notes ?? []));
	return parts.join('; ');
}

/** SMS 1.5: a message that must not leave, skipped: an opted-out number, or one its Send Window closed on. */
const isOptedOut = (json: IDataObject) => json.sent === false && json.optedOut === true;
const isPastWindow = (json: IDataObject) => json.sent === false && json.outsideSendWindow === true;

/** A send skipped as a repeat of an earlier execution: `skippedAsRepeat` up to SMS 1.3, `sent: false` from 1.4. */
const isRepeat = (json: IDataObject) => json.skippedAsRepeat === true || (json.sent === false && !isOptedOut(json) && !isPastWindow(json));

/** What an SMS send run's output items say it sent, skipped and cost. */
export function smsTally(items: INodeExecutionData[]) {
	let sent = 0;
	let segments = 0;
	let segmentsKnown = true;
	let yuan = 0;
	let again = 0;
	let repeats = 0;
	let optedOut = 0;
	let pastWindow = 0;
	let failed = 0;
	for (const item of items) {
		const json = item.json as IDataObject;
		if (isErrorItem(item)) failed++;
		else if (isOptedOut(json)) optedOut++;
		else if (isPastWindow(json)) pastWindow++;
		else if (isRepeat(json)) repeats++;
		else if (json.deduplicated === true || json.sentEarlierInThisRun === true) again++;
		// A send accepted without a usable task ID carries a warning instead; it was sent all the same.
		else if (json.taskId || json.warning !== undefined) {
			sent++;
			yuan += Number(json.costYuan) || 0;
			if (typeof json.segments === 'number') segments += json.segments;
			else {
				segments += 1;
				segmentsKnown = false;
			}
		}
	}
	return { sent, segments, segmentsKnown, yuan, again, repeats, optedOut, pastWindow, failed };
}

/** The bill of an SMS send run, read from its output items. */
export function smsBill(items: INodeExecutionData[]): string {
	const { sent, segments, segmentsKnown, yuan, again, repeats, optedOut, pastWindow, failed } = smsTally(items);
	const parts = [
		sent === 0
			? 'No SMS sent'
			: `${plural(sent, 'SMS', 'SMS')} sent, ${segmentsKnown ? '' : 'at least '}${plural(segments, 'message segment')}, ${roundYuan(yuan)} yuan when delivered`,
	];
	if (again > 0) parts.push(`${again} already sent earlier in this run, not sent again`);
	if (repeats > 0) parts.push(`${plural(repeats, 'repeat')} of an earlier execution skipped`);
	if (optedOut > 0) parts.push(`${plural(optedOut, 'opted-out number')} skipped`);
	if (pastWindow > 0) parts.push(`${plural(pastWindow, 'SMS', 'SMS')} not sent: the send window closed during the run`);
	if (failed > 0) parts.push(`${plural(failed, 'item')} failed`);
	return parts.join('; ');
}

/** The bill of an SMS preview: nothing sent, and what sending the previewed items would cost. */
export function smsPreviewBill(items: INodeExecutionData[]): string {
	const optedOut = items.filter((item) => !isErrorItem(item) && isOptedOut(item.json)).length;
	const previews = items.filter((item) => !isErrorItem(item) && !isOptedOut(item.json)).map((item) => item.json as IDataObject);
	const segments = previews.reduce((sum, json) => sum + (Number(json.segments) || 0), 0);
	const yuan = previews.reduce((sum, json) => sum + (Number(json.estimatedCostYuan) || 0), 0);
	const failed = countItems(items).failed;
	const parts = [`Preview only: no SMS sent, 0 yuan; sending ${previews.length === 1 ? 'this SMS' : `these ${previews.length} SMS`} would cost ${roundYuan(yuan)} yuan when delivered (${plural(segments, 'message segment')})`];
	if (optedOut > 0) parts.push(`${plural(optedOut, 'opted-out number')} would be skipped`);
	if (failed > 0) parts.push(`${plural(failed, 'item')} would be refused`);
	return parts.join('; ');
}

/**
 * Items a send skipped as a repeat of an earlier execution: said as a warning, with how to send
 * again, since a deliberate second test send from the editor is skipped too.
 */
export function repeatWarning(items: INodeExecutionData[]): string | undefined {
	const repeats = items.filter((item) => !isErrorItem(item) && isRepeat(item.json)).length;
	if (repeats === 0) return undefined;
	return `${plural(repeats, 'SMS', 'SMS')} not sent: an earlier execution sent the same message (number, signature, template, variables) within the Repeat Window. To send again, change the message, wait for the window to pass, or set Options > Records: Repeat Window (Minutes) to 0.`;
}

/** SMS 1.5: messages the Send Window closed on during the run, said as a warning with what to do. */
export function windowClosedWarning(items: INodeExecutionData[]): string | undefined {
	const closed = items.filter((item) => !isErrorItem(item) && isPastWindow(item.json));
	if (closed.length === 0) return undefined;
	return `${plural(closed.length, 'SMS', 'SMS')} not sent: the send window closed while the run was sending. Each says when the window opens (opensAt): route those with sent false to a Wait node, then back to this node.`;
}

/**
 * Which bill an operation gets: a paid or free lookup, an SMS send or preview, a free query per
 * item, free queries counted call by call (Import to Catalogue), or none (no gateway call: the opt-out list).
 */
export type BillKind = OperationName | 'sms' | 'smsPreview' | 'free' | 'freeQueries' | 'none';

/** The bill kind of a node's resource and operation. */

/** The run's bill as one line. */
export function billText(ctx: IExecuteFunctions, kind: BillKind, items: INodeExecutionData[]): string {
	const budget = tallies.get(ctx)?.budget;
	const text = billWithoutBudget(ctx, kind, items);
	return budget ? `${text}. ${budget}` : text;
}

function billWithoutBudget(ctx: IExecuteFunctions, kind: BillKind, items: INodeExecutionData[]): string {
	if (kind === 'sms') return smsBill(items);
	if (kind === 'smsPreview') return smsPreviewBill(items);
	if (kind === 'none') return 'No gateway call, 0 yuan';
	if (kind === 'free') {
		const counted = countItems(items);
		return lookupBill('smsStatus', counted.answered, 0, counted.failed);
	}
	const tally = tallyOf(ctx);
	if (kind === 'freeQueries') return lookupBill('smsStatus', tally.calls, 0, countItems(items).failed, { notes: tally.notes });
	const { reused, failed } = lookupTally(ctx, kind, items);
	return lookupBill(kind, tally.calls, reused, failed, tally);
}

/** A lookup run's calls, answers reused from earlier runs (`earlier`), repeats answered without a call (`reused`) and failed items. */
export function lookupTally(ctx: IExecuteFunctions, kind: OperationName, items: INodeExecutionData[]) {
	const counted = countItems(items);
	const tally = tallyOf(ctx);
	const answered = tally.answered ?? counted.answered;
	// A lookup asks once per distinct question: the answered items it did not call for reused an answer.
	const reused = tally.reused ?? (kind === 'violationSupport' ? 0 : Math.max(0, answered - tally.calls - (tally.earlier ?? 0)));
	return { calls: tally.calls, earlier: tally.earlier ?? 0, reused, failed: counted.failed };
}

/**
 * Shows the run's bill above the node's output. n8n versions without execution hints (before
 * 1.2x) lack `addExecutionHints`; the node then runs as before without the line.
 */
export function addBillHint(ctx: IExecuteFunctions, kind: BillKind, items: INodeExecutionData[]): void {
	if (typeof ctx.addExecutionHints !== 'function' || kind === 'none') return;
	try {
		ctx.addExecutionHints({ message: billText(ctx, kind, items), type: 'info', location: 'outputPane' });
		const repeats = kind === 'sms' ? repeatWarning(items) : undefined;
		if (repeats) ctx.addExecutionHints({ message: repeats, type: 'warning', location: 'outputPane' });
		const closed = kind === 'sms' ? windowClosedWarning(items) : undefined;
		if (closed) ctx.addExecutionHints({ message: closed, type: 'warning', location: 'outputPane' });
	} catch {
		// The hint is a courtesy: it must never fail a run that succeeded.
	}
}
