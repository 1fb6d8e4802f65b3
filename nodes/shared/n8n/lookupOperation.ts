/**
 * The lookup-operation builder: what every single-call lookup (violations, support rules, vehicle
 * detail, registration, telephone) shares, so that an operation file holds only its fields, its
 * request and its output.
 */
import type { IDataObject, IDisplayOptions, IExecuteFunctions, INodeExecutionData, INodeProperties, NodeOperationError } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { inputError } from '../errors/failures';
import type { OperationName } from '../gateway/catalog';
import { countedCall, type BillKind } from '../money/bill';
import { priceOf } from '../money/spend';
import { callOptions, gatewayClient } from '../transport/clientForNode';
import type { QueryValue } from '../transport/gatewayClient';
import { runForEachItem } from './batch';
import { simplifyProperties, usesFriendlyNames } from './description';
import { ItemParameters } from './parameters';

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
	simplified?: { v1: (answer: Answer) => IDataObject; friendly: (answer: Answer) => IDataObject };
	/** Output of an answer without Simplify; the answer itself when not given. */
	raw?: (answer: Answer) => IDataObject | IDataObject[];
	/** Free lookups share answers within a run only, unless this says across the execution. */
	shareAcrossExecution?: boolean;
}

type Plan<Params> = { params: Params; simplify: boolean };

export function lookupOperation<Params extends Record<string, QueryValue>, Answer>(definition: LookupDefinition<Params, Answer>) {
	const { operation, show, schema, simplified } = definition;
	const description: INodeProperties[] = [
		...definition.fields.map((field) => (show ? { ...field, displayOptions: { ...field.displayOptions, show: { ...show, ...field.displayOptions?.show } } } : field)),
		...(simplified ? simplifyProperties(show) : []),
	];
	const bill: BillKind = operation;

	async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
		const { client, parameters, options, friendly } = await openLookup(this);
		const paid = priceOf(operation) > 0;
		const present = (answer: Answer, plan: Plan<Params>) => {
			if (simplified && plan.simplify) return friendly ? simplified.friendly(answer) : simplified.v1(answer);
			return definition.raw ? definition.raw(answer) : (answer as IDataObject);
		};
		return await runForEachItem<Plan<Params>, Answer>(this, {
			concurrency: client.settings.limiter.maxConcurrent,
			plan: (itemIndex) => {
				const read: ReadParameter = (name, fallback) => parameters.get(name, itemIndex, fallback);
				const fail: FailItem = (field, problem, fix) => inputError(this.getNode(), itemIndex, field, problem, fix);
				return { params: definition.request(read, fail), simplify: simplified ? parameters.get('simplify', itemIndex, friendly) : false };
			},
			shareKey: (plan) => client.questionKey(operation, plan.params),
			shareAcrossExecution: definition.shareAcrossExecution,
			paid: paid ? { operation, client } : undefined,
			execute: async (plan) => await countedCall(this, async () => (await client.call(operation, plan.params, schema, options)).data),
			output: (answer, plan) => present(answer, plan),
		});
	}

	return { description, execute, bill };
}
