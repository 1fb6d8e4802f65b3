/** What a single-call lookup is made of (its definition) and what one run of it holds (Lookup). */
import type { IDataObject, IDisplayOptions, IExecuteFunctions, INode, INodeProperties } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { CREDENTIAL_TYPE } from '../gateway/account';
import type { OperationName } from '../gateway/catalog';
import type { NewsRule } from '../lookups/onlyNew';
import { StoreHints } from '../lookups/storeHints';
import { telephonePlanOf, type TelephonePlan } from '../lookups/telephoneQuota';
import { executionMemory, type SharedAnswer } from '../state/executionMemory';
import { callOptions, gatewayClient } from '../transport/clientForNode';
import type { QueryValue } from '../transport/gatewayClient';
import { NODE_VERSION_1_2, usesFriendlyNames } from './description';
import { ItemParameters, type ItemInput } from './parameters';

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
	/** The item's request, checked: throws `item.fail(…)` for a bad field. */
	request: (item: ItemInput) => Params;
	schema: z.ZodType<Answer>;
	/** Simplified output: version 1's (gateway names, smoothed values) and version 1.1's (self-explaining names). Without it, no Simplify field. */
	simplified?: {
		v1: (answer: Answer) => IDataObject;
		/** `given`: the input as the user gave it, from version 1.2 on (see `asGiven`). */
		friendly: (answer: Answer, given?: string) => IDataObject;
	};
	/** Version 1.2 on: the input as given, kept beside its normalised form in the simplified record. */
	asGiven?: (item: ItemInput) => string;
	/** Output of an answer without Simplify; the answer itself when not given. */
	raw?: (answer: Answer) => IDataObject | IDataObject[];
	/** Free lookups share answers within a run only, unless this says across the execution (and then offer Reuse Answers For). */
	shareAcrossExecution?: boolean;
	/** Only New Violations / Only When Changed. */
	news?: NewsRule<Answer>;
	/** Counts the day's calls against the credential's telephone plan. */
	dailyQuota?: boolean;
	/** The phone number a request asks about (Telephone): what the run keeps about it is tagged with it, so that erasing the number finds it. */
	phoneOf?: (params: Params) => string;
}

/** What the operation offers: set by lookupOperation from the definition. */
export interface LookupOffer {
	paid: boolean;
	/** Reuse Answers For is offered, and answers are shared across the execution. */
	reusable: boolean;
	optionCount: number;
}

/** One run of a lookup: its definition, the credential's client and what the run keeps on the side. */
export interface Lookup<Params extends Record<string, QueryValue>, Answer> extends LookupContext, LookupOffer {
	ctx: IExecuteFunctions;
	definition: LookupDefinition<Params, Answer>;
	node: INode;
	hints: StoreHints;
	/** The execution's answers, where answers are shared across it. */
	memory?: Map<string, SharedAnswer>;
	/** Where the answers the execution remembers share their short texts (state/sharedStrings.ts). */
	strings?: Map<string, string>;
	telephonePlan?: TelephonePlan;
	asGiven?: (item: ItemInput) => string;
}

/**
 * Read and checked: one item's request and what it asks of the run; `question` keys the answer
 * (account hash, operation, request). Every plan of a batch lives until its items are presented,
 * so it holds only what differs per item (bench section 5).
 */
export interface LookupPlan<Params> {
	params: Params;
	question: string;
	choices: LookupChoices;
	/** The input as given (asGiven). */
	given?: string;
}

/** What an item chose besides its request: read per item, nearly always alike, so alike items share one (sameChoices). */
export interface LookupChoices {
	simplify: boolean;
	/** Reuse Answers For, as ms (0 = off). */
	reuseMs: number;
	onlyNew: boolean;
	startOver: boolean;
}

/** `next`, or `previous` when it chose the same: a batch then holds one choices object, not one per item. */
export function sameChoices(previous: LookupChoices | undefined, next: LookupChoices): LookupChoices {
	if (!previous) return next;
	const alike = previous.simplify === next.simplify && previous.reuseMs === next.reuseMs && previous.onlyNew === next.onlyNew && previous.startOver === next.startOver;
	return alike ? previous : next;
}

/**
 * An answer that came from an earlier execution or was kept for one, with when the gateway gave it.
 * Any other answer is the gateway's data itself: the execution remembers every answer, so a wrapper
 * per answer would stay in memory as long (bench section 5).
 */
export class DatedAnswer<Answer> {
	constructor(
		readonly answer: Answer,
		readonly answeredAt: number | undefined,
		readonly reused: boolean,
	) {}
}
export type Answered<Answer> = Answer | DatedAnswer<Answer>;
export const answerOf = <Answer>(answered: Answered<Answer>): Answer => (answered instanceof DatedAnswer ? (answered.answer as Answer) : (answered as Answer));

export async function startLookup<Params extends Record<string, QueryValue>, Answer>(
	ctx: IExecuteFunctions,
	definition: LookupDefinition<Params, Answer>,
	offer: LookupOffer,
): Promise<Lookup<Params, Answer>> {
	// Read once: n8n's getNode() deep-copies the node at every call.
	const node = ctx.getNode();
	return {
		...(await openLookup(ctx)),
		...offer,
		ctx,
		definition,
		node,
		hints: new StoreHints(ctx),
		memory: offer.reusable ? executionMemory(ctx).answers : undefined,
		strings: offer.reusable ? executionMemory(ctx).strings : undefined,
		telephonePlan: definition.dailyQuota ? telephonePlanOf(await ctx.getCredentials(CREDENTIAL_TYPE)) : undefined,
		asGiven: definition.asGiven && node.typeVersion >= NODE_VERSION_1_2 ? definition.asGiven : undefined,
	};
}
