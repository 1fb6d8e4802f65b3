import type { IDataObject, IExecuteFunctions, INodeExecutionData, NodeApiError, NodeOperationError } from 'n8n-workflow';

import { sleep } from 'n8n-workflow';

import { asNodeError } from './errors';
import { executionScope, sharedAnswer } from './executionScope';

export interface ItemWork<Plan, Result> {
	/** Reads and checks the item's parameters. Throws (naming the field) before anything is paid. */
	plan: (itemIndex: number) => Plan | Promise<Plan>;
	/**
	 * Identical questions share one gateway call. Paid lookups also share it across the whole
	 * execution (so Retry On Fail does not pay again); `undefined` disables sharing for the item.
	 */
	shareKey?: (plan: Plan) => string | undefined;
	shareAcrossExecution?: boolean;
	execute: (plan: Plan, itemIndex: number) => Promise<Result>;
	/** One or more output objects for the item; each is paired with the item. */
	output: (result: Result, plan: Plan, itemIndex: number) => IDataObject | IDataObject[];
	/** Items processed at once; the credential's limiter still bounds the gateway calls. */
	concurrency: number;
}

const PLAN_SLICE = 250;

type ItemError = NodeApiError | NodeOperationError;

const asItemError = (ctx: IExecuteFunctions, error: unknown, itemIndex: number): ItemError => asNodeError(ctx.getNode(), error, itemIndex);

function errorItem(error: ItemError, itemIndex: number): INodeExecutionData {
	const json: IDataObject = { error: error.message };
	if (error.description) json.errorDescription = error.description;
	const gatewayCode = error.context.gatewayCode;
	if (gatewayCode !== undefined) json.gatewayCode = gatewayCode;
	return { json, pairedItem: { item: itemIndex } };
}

/**
 * Runs one operation over every input item: all checks first, then the calls with bounded
 * concurrency and shared answers for identical questions. The output keeps input order, pairs
 * every item, and under Continue On Fail turns each failed item into an error item.
 */
export async function runForEachItem<Plan, Result>(
	ctx: IExecuteFunctions,
	work: ItemWork<Plan, Result>,
): Promise<INodeExecutionData[]> {
	const items = ctx.getInputData();
	const continueOnFail = ctx.continueOnFail();
	const plans: Array<Plan | undefined> = new Array(items.length);
	const results: Array<INodeExecutionData[] | undefined> = new Array(items.length);

	// Check every item before the first paid call: a bad item must not leave others half-paid.
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		// Long batches give the event loop a turn now and then: n8n serves other work meanwhile.
		if (itemIndex > 0 && itemIndex % PLAN_SLICE === 0) await sleep(0);
		try {
			plans[itemIndex] = await work.plan(itemIndex);
		} catch (error) {
			const itemError = asItemError(ctx, error, itemIndex);
			if (!continueOnFail) throw itemError;
			results[itemIndex] = [errorItem(itemError, itemIndex)];
		}
	}

	const executionId = ctx.getExecutionId?.() || '';
	const shared = work.shareAcrossExecution && executionId ? executionScope(executionId).lookups : new Map<string, Promise<unknown>>();
	const answerFor = (plan: Plan, itemIndex: number): Promise<Result> => {
		const key = work.shareKey?.(plan);
		if (key === undefined) return work.execute(plan, itemIndex);
		return sharedAnswer(shared, key, () => work.execute(plan, itemIndex));
	};

	const failures: Array<{ itemIndex: number; error: ItemError }> = [];
	let nextIndex = 0;
	const worker = async () => {
		// Without Continue On Fail, the first failure stops new calls; calls in flight finish.
		while (nextIndex < items.length && failures.length === 0) {
			const itemIndex = nextIndex++;
			if (results[itemIndex]) continue;
			const plan = plans[itemIndex] as Plan;
			try {
				const result = await answerFor(plan, itemIndex);
				const objects = work.output(result, plan, itemIndex);
				results[itemIndex] = (Array.isArray(objects) ? objects : [objects]).map((json) => ({
					json,
					pairedItem: { item: itemIndex },
				}));
			} catch (error) {
				const itemError = asItemError(ctx, error, itemIndex);
				if (continueOnFail) {
					results[itemIndex] = [errorItem(itemError, itemIndex)];
				} else {
					failures.push({ itemIndex, error: itemError });
				}
			}
		}
	};
	const workers = Math.max(1, Math.min(work.concurrency, items.length));
	await Promise.all(Array.from({ length: workers }, worker));

	if (failures.length > 0) {
		throw failures.reduce((first, failure) => (failure.itemIndex < first.itemIndex ? failure : first)).error;
	}
	return results.flatMap((result) => result ?? []);
}
