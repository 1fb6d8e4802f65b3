/**
 * One run of a single-call lookup made by lookupOperation, as a row of steps in the order they
 * happen: read and check each item, take kept answers, reserve the day's quota, check the spending
 * cap, call the gateway (the batch runner; each answer kept for later as it comes), take what is
 * new, present. Each step takes what the steps before it returned.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { MisshapenAnswer } from '../errors/failures';
import { noteLookupRun } from '../money/bill';
import { priceOf } from '../money/spend';
import { takeWhatIsNew, type NewsQuestion } from '../lookups/onlyNew';
import { reuseFields, reuseWindowMs } from '../lookups/reuse';
import type { QueryValue } from '../transport/gatewayClient';
import { Batch, callEach } from './batch';
import { errorItem, errorItemForm } from './errorItems';
import { answerOf, DatedAnswer, sameChoices, startLookup, type Answered, type Lookup, type LookupChoices, type LookupDefinition, type LookupOffer, type LookupPlan } from './lookupDefinition';
import { checkSpendingCap, LookupCalls, refuseBeyondQuota, reserveQuota, settleQuota, settleSpend, takeKeptLookups, type LookupBatch } from './lookupSteps';
import { ItemInput } from './parameters';

type Params = Record<string, QueryValue>;

export async function runLookup<P extends Params, A>(ctx: IExecuteFunctions, definition: LookupDefinition<P, A>, offer: LookupOffer): Promise<INodeExecutionData[]> {
	const lookup = await startLookup(ctx, definition, offer);
	const batch = planItems(lookup);
	const kept = await takeKeptLookups(lookup, batch);
	const calls = new LookupCalls(lookup, kept);
	const reservation = await reserveQuota(lookup, batch, calls);
	let firstAskers: Uint8Array | undefined;
	try {
		refuseBeyondQuota(lookup, batch, calls, reservation);
		firstAskers = await checkSpendingCap(lookup, batch, calls);
		await callEach(batch, calls);
	} finally {
		await settleSpend(lookup);
		await settleQuota(lookup, reservation, calls.attempted);
	}
	noteLookupRun(ctx, { answered: answeredItems(batch), earlier: kept.size });
	const fresh = await newsOf(lookup, batch);
	const output = presentItems(lookup, batch, fresh, firstAskers);
	lookup.hints.show();
	return output;
}

/**
 * Read and check each item before anything is paid: a bad item must not leave others half-paid.
 * One synchronous pass, as n8n's own nodes read their items (about 0.1 ms an item): event-loop turns
 * between slices taught V8 to move n8n's expression objects to its old generation, and a batch of
 * 10,000 then grew n8n by about 110 MB rather than 45 (bench section 5; docs/troubleshooting.md).
 */
function planItems<P extends Params, A>(lookup: Lookup<P, A>): LookupBatch<P, A> {
	const batch: LookupBatch<P, A> = new Batch(lookup.ctx);
	let choices: LookupChoices | undefined;
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		try {
			const plan = planItem(lookup, new ItemInput(lookup.parameters, lookup.node, itemIndex), choices);
			choices = plan.choices;
			batch.plans[itemIndex] = plan;
		} catch (error) {
			batch.fail(itemIndex, error);
		}
	}
	return batch;
}

/** One item's plan; `previous` is the item before's choices, shared when alike. */
function planItem<P extends Params, A>(lookup: Lookup<P, A>, item: ItemInput, previous: LookupChoices | undefined): LookupPlan<P> {
	const { definition, client, friendly } = lookup;
	const params = definition.request(item);
	const chosen = lookup.optionCount > 0 ? item.read<IDataObject>('options', {}) : {};
	const onlyNew = definition.news !== undefined && chosen[definition.news.option.name] === true;
	const choices = sameChoices(previous, {
		simplify: definition.simplified ? item.read('simplify', friendly) : false,
		reuseMs: lookup.reusable ? reuseWindowMs(chosen.reuseAnswersHours) : 0,
		onlyNew,
		startOver: onlyNew && chosen.startOver === true,
	});
	return { params, question: client.questionKey(definition.operation, params), choices, given: lookup.asGiven?.(item) };
}

function answeredItems(batch: Batch<unknown>): number {
	let answered = 0;
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) if (batch.isAnswered(itemIndex)) answered++;
	return answered;
}

/** Only New: the fingerprints new to this node, per question, for the items that asked (undefined when none did). */
async function newsOf<P extends Params, A>(lookup: Lookup<P, A>, batch: LookupBatch<P, A>): Promise<Map<string, Set<string>> | undefined> {
	const news = lookup.definition.news;
	if (!news) return undefined;
	const asked: NewsQuestion[] = [];
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		const plan = batch.plans[itemIndex];
		const answered = batch.answers[itemIndex];
		if (!plan?.choices.onlyNew || !batch.isAnswered(itemIndex) || answered instanceof MisshapenAnswer) continue;
		const prints = news.fingerprints(answerOf(answered as Answered<A>));
		asked.push({ question: plan.question, prints, startOver: plan.choices.startOver, phone: lookup.definition.phoneOf?.(plan.params) });
	}
	return asked.length === 0 ? undefined : await takeWhatIsNew(lookup.ctx, lookup.hints, news, asked);
}

/**
 * Present every item in input order, each paired with its item: its answer's records (only what
 * is new, where the item asked for that), a misshapen answer's warning, or its error item. A paid
 * item's costYuan is the price on the item of this run that asked its question first and made the
 * call, 0 on the others.
 */
function presentItems<P extends Params, A>(lookup: Lookup<P, A>, batch: LookupBatch<P, A>, fresh: Map<string, Set<string>> | undefined, firstAskers: Uint8Array | undefined): INodeExecutionData[] {
	const form = errorItemForm(lookup.ctx);
	const price = lookup.paid ? priceOf(lookup.definition.operation) : 0;
	const items: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		const error = batch.errors[itemIndex];
		if (error) items.push(errorItem(error, itemIndex, form));
		if (error || !batch.isAnswered(itemIndex)) continue;
		const answered = batch.answers[itemIndex] as Answered<A> | MisshapenAnswer;
		const costYuan = lookup.paid ? (firstAskers?.[itemIndex] === 1 && batch.calledByRun(itemIndex) ? price : 0) : undefined;
		const records =
			answered instanceof MisshapenAnswer
				? [costYuan === undefined ? answered.toOutput() : { ...answered.toOutput(), costYuan }]
				: recordsOf(lookup, batch.plans[itemIndex] as LookupPlan<P>, answered, fresh, costYuan);
		for (const json of records) items.push({ json, pairedItem: { item: itemIndex } });
	}
	return items;
}

/**
 * An item's output records: its answer (narrowed to what is new, or none when nothing is),
 * presented, with costYuan (when given) and the reuse fields last.
 */
function recordsOf<P extends Params, A>(lookup: Lookup<P, A>, plan: LookupPlan<P>, answered: Answered<A>, fresh: Map<string, Set<string>> | undefined, costYuan: number | undefined): IDataObject[] {
	const { simplified, raw, news } = lookup.definition;
	let answer = answerOf(answered);
	const { simplify: simplifyAsked, onlyNew, reuseMs } = plan.choices;
	if (fresh && onlyNew) {
		const prints = fresh.get(plan.question);
		if (!prints || prints.size === 0) return [];
		if (news?.narrow) answer = news.narrow(answer, (print) => prints.has(print));
	}
	const simplify = simplified !== undefined && simplifyAsked;
	const presented = simplify ? (lookup.friendly ? simplified.friendly(answer, plan.given) : simplified.v1(answer)) : raw ? raw(answer) : (answer as IDataObject);
	const dated = answered instanceof DatedAnswer ? answered : undefined;
	return (Array.isArray(presented) ? presented : [presented]).map((json) => {
		// A simplified record is built for this item: its cost (in its place, output/friendly.ts) and reuse fields are set on it. A raw answer is shared, so copied.
		const record = simplify ? json : { ...json };
		if (costYuan !== undefined) record.costYuan = costYuan;
		if (reuseMs > 0) Object.assign(record, reuseFields(dated?.reused ?? false, dated?.answeredAt));
		return record;
	});
}
