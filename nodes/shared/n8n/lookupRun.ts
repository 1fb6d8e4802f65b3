/** One run of a lookup made by lookupOperation: plan, reuse, quota, calls, what is new, presentation. */
import type { IDataObject, IDisplayOptions, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { GatewayFailure, inputError } from '../errors/failures';
import type { OperationName } from '../gateway/catalog';
import { countCall, countItems, noteLookupRun } from '../money/bill';
import { executionMemory, SharedAnswer } from '../state/executionMemory';
import { CREDENTIAL_TYPE } from '../gateway/account';
import { parseAnswer } from '../gateway/schemas/fastParse';
import { callOptions, gatewayClient } from '../transport/clientForNode';
import type { QueryValue } from '../transport/gatewayClient';
import { runForEachItem } from './batch';
import { NODE_VERSION_1_2, usesFriendlyNames } from './description';
import { ItemParameters } from './parameters';
import { chinaIso } from '../lookups/chinaTime';
import { nodeScope, takeNews, type NewsRule } from '../lookups/onlyNew';
import { keepAnswer, readKeptAnswers, reuseWindowMs } from '../lookups/reuse';
import { countCalls, quotaLine, quotaRefusal, reserveCalls, telephonePlanOf } from '../lookups/telephoneQuota';
import { StoreHints } from '../lookups/storeHints';

/** Reads one parameter of the item being planned. */
export type ReadParameter = <T>(name: string, fallback: T) => T;
/** An input error naming the item and field, made before anything is paid. */
export type FailItem = (field: string, problem: string, fix: string) => NodeOperationError;

/** What every lookup opens with: the credential's client, parameters read once, call options, the version's names. */
export async function openLookup(ctx: IExecuteFunctions) {
	const client = await gatewayClient(ctx);
	return { client, parameters: new ItemParameters(ctx), options: callOptions(ctx), friendly: usesFriendlyNames(ctx) };
}

export type LookupContext = Awaited<ReturnType<typeof openLookup>>;

export interface LookupDefinition<Params extends Record<string, QueryValue>, Answer> {
	/** The gateway operation; paid when it has a price. It also names what the run's bill counts. */
	operation: OperationName;
	/** Where the operation's fields show (nodes with one operation leave it out). */
	show?: NonNullable<IDisplayOptions['show']>;
	/** The operation's own fields, shown before Simplify. */
	fields: INodeProperties[];
	/** The item's request, checked: throws `fail(…)` for a bad field. */
	request: (read: ReadParameter, fail: FailItem) => Params;
	schema: z.ZodType<Answer>;
	/** Simplified output: version 1's (gateway names, smoothed values) and version 1.1's (self-explaining names). Without it, no Simplify field. */
	simplified?: {
		v1: (answer: Answer) => IDataObject;
		/** `given`: the input as the user gave it, from version 1.2 on (see `asGiven`). */
		friendly: (answer: Answer, given?: IDataObject) => IDataObject;
	};
	/** Version 1.2 on: input fields kept as given beside their normalised form in the simplified record. */
	asGiven?: (read: ReadParameter) => IDataObject;
	/** Output of an answer without Simplify; the answer itself when not given. */
	raw?: (answer: Answer) => IDataObject | IDataObject[];
	/** Free lookups share answers within a run only, unless this says across the execution (and then offer Reuse Answers For). */
	shareAcrossExecution?: boolean;
	/** Only New Violations / Only When Changed. */
	news?: NewsRule<Answer>;
	/** Counts the day's calls against the credential's telephone plan. */
	dailyQuota?: boolean;
}

/** One item's checked request and what it asks of the run; `question` keys the answer (account hash, operation, request). */
type Plan<Params> = { params: Params; question: string; simplify: boolean; reuseMs: number; onlyNew: boolean; startOver: boolean; given?: IDataObject };
/**
 * An answer that came from an earlier execution or was kept for one, with when the gateway gave it.
 * Any other answer is the gateway's data itself: the execution remembers every answer, so a wrapper
 * per answer would stay in memory as long (bench section 5).
 */
class KeptAnswer<Answer> {
	constructor(
		readonly answer: Answer,
		readonly answeredAt: number | undefined,
		readonly reused: boolean,
	) {}
}
type Answered<Answer> = Answer | KeptAnswer<Answer>;
const answerOf = <Answer>(answered: Answered<Answer>): Answer => (answered instanceof KeptAnswer ? (answered.answer as Answer) : (answered as Answer));

/** The items runForEachItem outputs carry the answer; the builder presents them once it knows what is new. */
const CARRIED = Symbol('answer and plan');
type Carried<Params, Answer> = { answered: Answered<Answer>; plan: Plan<Params> };

/** One run of a lookup: plan, reuse, quota, calls, what is new, presentation. */
export async function runLookup<Params extends Record<string, QueryValue>, Answer>(
	ctx: IExecuteFunctions,
	definition: LookupDefinition<Params, Answer>,
	{ paid, reusable, optionCount }: { paid: boolean; reusable: boolean; optionCount: number },
): Promise<INodeExecutionData[]> {
	const { operation, schema, simplified, news } = definition;
	const { client, parameters, options: call, friendly } = await openLookup(ctx);
	const hints = new StoreHints(ctx);
	const memory = reusable ? executionMemory(ctx).answers : undefined;
	const telephonePlan = definition.dailyQuota ? telephonePlanOf(await ctx.getCredentials(CREDENTIAL_TYPE)) : undefined;
	/** The telephone day's reservation (Refuse Calls Beyond the Quota) and the calls that reached the gateway. */
	const quota = { day: undefined as string | undefined, granted: 0, reserved: false, attempted: 0 };
	let earlier = 0;

	/**
	 * Answers from earlier executions sit in the execution's memory under a key of their own, so that
	 * only nodes with Reuse Answers For get them; an answer paid in this execution serves every node.
	 */
	const keptKey = (question: string) => `${question}|from an earlier execution`;
	const kept = new Set<string>();
	const shareKey = (item: Plan<Params>) => (item.reuseMs > 0 && kept.has(item.question) ? keptKey(item.question) : item.question);

	const beforeCalls = async (plans: Map<number, Plan<Params>>) => {
		const refused = new Map<number, unknown>();
		const windows = new Map<string, number>();
		for (const item of plans.values()) {
			// Read again even when another node took it: this node's window may be shorter.
			if (item.reuseMs > 0 && !memory?.has(item.question)) windows.set(item.question, Math.max(item.reuseMs, windows.get(item.question) ?? 0));
		}
		if (memory && windows.size > 0) {
			const found = await hints.attempt('Reuse Answers For', 'the questions were asked again', async (store) => await readKeptAnswers(store, windows));
			for (const [question, { data, answeredAt }] of found ?? []) {
				// Checked again: what the store holds may come from an older version of the package.
				const parsed = parseAnswer(schema, data);
				if (!parsed.success) continue;
				if (!memory.has(keptKey(question))) memory.set(keptKey(question), SharedAnswer.of(new KeptAnswer(parsed.data, answeredAt, true), 'an earlier execution'));
				kept.add(question);
			}
		}
		earlier = kept.size;
		if (telephonePlan?.refuseBeyondQuota) {
			// Distinct questions still to call, in item order: the first ones get the day's room.
			const needed = [...new Set([...plans.values()].map(shareKey).filter((key) => !memory?.has(key)))];
			const reservation =
				needed.length === 0
					? undefined
					: await hints.attempt('The telephone quota', 'calls were not limited this run', async (store) => await reserveCalls(store, client.accountKey, telephonePlan, needed.length));
			if (reservation) {
				Object.assign(quota, { day: reservation.day, granted: reservation.granted, reserved: true });
				const beyond = new Set(needed.slice(reservation.granted));
				const refusal = quotaRefusal(telephonePlan, reservation.used + reservation.granted, reservation.resetsAt);
				for (const [itemIndex, item] of plans) {
					if (beyond.has(shareKey(item))) refused.set(itemIndex, new NodeOperationError(ctx.getNode(), refusal.message, { description: refusal.description, itemIndex }));
				}
			}
		}
		return refused;
	};

	const ask = async (item: Plan<Params>): Promise<Answered<Answer>> => {
		let data: Answer;
		try {
			data = (await client.call(operation, item.params, schema, call)).data;
		} catch (error) {
			// A call that left counts against the gateway's quota whatever it answered.
			if (!(error instanceof GatewayFailure && (error.kind === 'not-sent' || error.kind === 'cancelled'))) quota.attempted++;
			return await Promise.reject(error);
		}
		countCall(ctx);
		quota.attempted++;
		if (item.reuseMs <= 0) return data;
		const answeredAt = await hints.attempt('Reuse Answers For', 'this answer was not kept for later runs', async (store) => await keepAnswer(store, item.question, data, item.reuseMs));
		return answeredAt === undefined ? data : new KeptAnswer(data, answeredAt, false);
	};

	const settleQuota = async () => {
		if (!telephonePlan) return;
		const change = quota.reserved ? quota.attempted - quota.granted : quota.attempted;
		const count = await hints.attempt('The telephone quota', "today's calls were not counted", async (store) => await countCalls(store, client.accountKey, quota.day, change), { courtesy: !telephonePlan.refuseBeyondQuota });
		if (count !== undefined) noteLookupRun(ctx, { notes: [quotaLine(telephonePlan, count)] });
	};

	const present = (answer: Answer, item: Plan<Params>) => {
		if (simplified && item.simplify) return friendly ? simplified.friendly(answer, item.given) : simplified.v1(answer);
		return definition.raw ? definition.raw(answer) : (answer as IDataObject);
	};
	/** An item's output records: its answer presented, then costYuan (when given) and the reuse fields last. */
	const recordsOf = (answer: Answer, answered: Answered<Answer>, itemPlan: Plan<Params>, costYuan: unknown): IDataObject[] => {
		const presented = present(answer, itemPlan);
		// A simplified record is built for this item: its last fields are set in place. A raw answer is shared, so copied.
		const builtForItem = simplified !== undefined && itemPlan.simplify;
		return (Array.isArray(presented) ? presented : [presented]).map((json) => {
			const record = builtForItem ? json : { ...json };
			if (costYuan !== undefined) record.costYuan = costYuan;
			if (itemPlan.reuseMs > 0) {
				const kept = answered instanceof KeptAnswer ? answered : undefined;
				record.reused = kept?.reused ?? false;
				record.answeredAt = kept?.answeredAt === undefined ? null : chinaIso(kept.answeredAt);
			}
			return record;
		});
	};

	// Read once: n8n's getNode() deep-copies the node at every call.
	const asGiven = definition.asGiven && ctx.getNode().typeVersion >= NODE_VERSION_1_2 ? definition.asGiven : undefined;
	let items: INodeExecutionData[];
	try {
		items = await runForEachItem<Plan<Params>, Answered<Answer>>(ctx, {
			concurrency: client.settings.limiter.maxConcurrent,
			plan: (itemIndex) => {
				const read: ReadParameter = (name, fallback) => parameters.get(name, itemIndex, fallback);
				const fail: FailItem = (field, problem, fix) => inputError(ctx.getNode(), itemIndex, field, problem, fix);
				const params = definition.request(read, fail);
				const chosen = optionCount > 0 ? read<IDataObject>('options', {}) : {};
				const onlyNew = news !== undefined && chosen[news.option.name] === true;
				return {
					params,
					question: client.questionKey(operation, params),
					simplify: simplified ? read('simplify', friendly) : false,
					given: asGiven?.(read),
					reuseMs: reusable ? reuseWindowMs(chosen.reuseAnswersHours) : 0,
					onlyNew,
					startOver: onlyNew && chosen.startOver === true,
				};
			},
			shareKey,
			shareAcrossExecution: definition.shareAcrossExecution,
			paid: paid ? { operation, client } : undefined,
			beforeCalls: reusable || telephonePlan?.refuseBeyondQuota ? beforeCalls : undefined,
			execute: ask,
			// Presented at once, unless the item waits to know what is new; a paid item's costYuan is set in place by runForEachItem.
			output: (answered, item) =>
				item.onlyNew ? ({ [CARRIED]: { answered, plan: item } } as unknown as IDataObject) : recordsOf(answerOf(answered), answered, item, paid ? 0 : undefined),
		});
	} finally {
		await settleQuota();
	}

	noteLookupRun(ctx, { answered: countItems(items).answered, earlier });
	const fresh = await newsOf(items);
	const carriedOf = (item: INodeExecutionData) => item.json[CARRIED as unknown as string] as Carried<Params, Answer> | undefined;
	// Only the items that waited to know what is new are still to present.
	const anyCarried = items.some((item) => carriedOf(item) !== undefined);
	const output = !anyCarried
		? items
		: items.flatMap((item) => {
				const carried = carriedOf(item);
				if (!carried) return [item];
				const { answered, plan: itemPlan } = carried;
				let answer = answerOf(answered);
				if (fresh && itemPlan.onlyNew) {
					const prints = new Set(fresh.get(itemPlan.question));
					if (prints.size === 0) return [];
					if (news?.narrow) answer = news.narrow(answer, (print) => prints.has(print));
				}
				const costYuan = 'costYuan' in item.json ? item.json.costYuan : undefined;
				return recordsOf(answer, answered, itemPlan, costYuan).map((json) => ({ json, pairedItem: item.pairedItem }));
			});
	hints.show();
	return output;

	/** Only New: one update of the node's seen-state for the whole run; the bill counts what had news. */
	async function newsOf(answeredItems: INodeExecutionData[]): Promise<Map<string, string[]> | undefined> {
		if (!news) return undefined;
		const carried = answeredItems.map((item) => item.json[CARRIED as unknown as string] as Carried<Params, Answer> | undefined).filter((entry) => entry?.plan.onlyNew);
		if (carried.length === 0) return undefined;
		const answers = new Map<string, string[]>();
		for (const entry of carried) if (entry) answers.set(entry.plan.question, news.fingerprints(answerOf(entry.answered)));
		const startOver = carried.some((entry) => entry?.plan.startOver);
		let where = 'the store';
		const fresh = await hints
			.open()
			.then(async (store) => {
				where = store.label;
				return await takeNews(store, nodeScope(ctx), news.kind, answers, { startOver, retry: ctx.getMode() === 'retry' });
			})
			.catch((error: unknown) => {
				throw new NodeOperationError(ctx.getNode(), `${news.option.displayName} could not read what this node output before, in ${where}: ${error instanceof Error ? error.message : String(error)}`, {
					description: 'Nothing was output, so nothing is reported twice. The answers are kept for this execution: Retry On Fail does not pay for them again.',
				});
			});
		const inputs = new Map<number, boolean>();
		answeredItems.forEach((item, index) => {
			const entry = item.json[CARRIED as unknown as string] as Carried<Params, Answer> | undefined;
			if (!entry?.plan.onlyNew) return;
			const paired = item.pairedItem as { item: number } | undefined;
			const input = paired?.item ?? index;
			inputs.set(input, (inputs.get(input) ?? false) || (fresh.get(entry.plan.question)?.length ?? 0) > 0);
		});
		noteLookupRun(ctx, {
			news: {
				checked: inputs.size,
				withNews: [...inputs.values()].filter(Boolean).length,
				words: news.bill,
			},
		});
		return fresh;
	}
}
