import type { IDataObject, IExecuteFunctions, INodeExecutionData, NodeApiError } from 'n8n-workflow';

import { NodeOperationError, sleep } from 'n8n-workflow';

import { spendMeter } from '../transport/clientForNode';
import { asNodeError, MisshapenAnswer } from '../errors/failures';
import { describeCalls, priceOf, type SpendMeter } from '../money/spend';
import { errorItemsKeepInput } from './description';
import type { OperationName } from '../gateway/catalog';
import { executionMemory, runIdOf, sharedAnswer, type SharedAnswer } from '../state/executionMemory';
import type { GatewayClient } from '../transport/gatewayClient';

export interface ItemWork<Plan, Result> {
	/** Reads and checks the item's parameters. Throws (naming the field) before anything is paid. */
	plan: (itemIndex: number) => Plan | Promise<Plan>;
	/**
	 * Identical questions share one gateway call. Paid lookups also share it across the whole
	 * execution (so Retry On Fail does not pay again); `undefined` disables sharing for the item.
	 */
	shareKey?: (plan: Plan) => string | undefined;
	/** Share answers with every run and node of the execution (implied by `paid`). */
	shareAcrossExecution?: boolean;
	/**
	 * The paid operation each distinct question makes. Before the first call the distinct questions
	 * not yet answered in this execution are checked against the credential's spending cap, and each
	 * output item gets `costYuan`: the price on the first item of the run that asked, 0 on items that
	 * reused an answer.
	 */
	paid?: { operation: OperationName; client: GatewayClient };
	/**
	 * Runs once after every item is checked and before the first call, with the plans still to call.
	 * Returns the items it refuses (they become errors like failed checks).
	 */
	beforeCalls?: (plans: Map<number, Plan>) => Promise<Map<number, unknown> | void>;
	execute: (plan: Plan, itemIndex: number) => Promise<Result>;
	/** One or more output objects for the item; each is paired with the item. */
	output: (result: Result, plan: Plan, itemIndex: number) => IDataObject | IDataObject[];
	/** Items processed at once; the credential's limiter still bounds the gateway calls. */
	concurrency: number;
}

/**
 * Checks run this long between turns of the event loop. A turn costs at least 1 ms (n8n's sleep is
 * a timer), so a count of items would idle more than it works for cheap items (a lookup's checks
 * take about 0.05 ms, an SMS item's up to 1 ms: bench sections 1 and 9).
 */
const PLAN_SLICE_MS = 5;

type ItemError = NodeApiError | NodeOperationError;

const asItemError = (ctx: IExecuteFunctions, error: unknown, itemIndex: number): ItemError => asNodeError(ctx.getNode(), error, itemIndex);

/** How failed items leave under Continue On Fail: see errorItem. */
type ErrorItemForm = 'regular' | 'errorOutput' | 'errorOutputWithInput';

function errorItemForm(ctx: IExecuteFunctions): ErrorItemForm {
	if (errorItemsKeepInput(ctx.getNode())) return 'errorOutputWithInput';
	return ctx.getNode().onError === 'continueErrorOutput' ? 'errorOutput' : 'regular';
}

/**
 * A failed item under Continue On Fail. Under "Continue (using error output)" it carries `error`
 * (as n8n's own nodes set it), which sends it to the error output; n8n then shows the error's
 * message, description and context, and replaces the json by the message alone. From the versions
 * in ERROR_ITEMS_KEEP_INPUT_FROM it carries no `error` and its json only `error` and `message` (the
 * fix): n8n routes such an item to the error output and lays the input item's json beneath it, so
 * the error branch keeps the phone, plate or keyword. Under "Continue (regular output)" it carries
 * no `error`, for n8n would replace the json: the readable fields stay. The error is redacted by asNodeError.
 */
function errorItem(error: ItemError, itemIndex: number, form: ErrorItemForm): INodeExecutionData {
	const pairedItem = { item: itemIndex };
	if (form === 'errorOutputWithInput') return { json: error.description ? { error: error.message, message: error.description } : { error: error.message }, pairedItem };
	const json: IDataObject = { error: error.message };
	if (error.description) json.errorDescription = error.description;
	const gatewayCode = error.context.gatewayCode;
	if (gatewayCode !== undefined) json.gatewayCode = gatewayCode;
	return form === 'errorOutput' ? { json, error, pairedItem } : { json, pairedItem };
}

/** The answer of a call that succeeded (code 0, billed) with data that did not fit the schema. */
function misshapenAnswerIn(error: unknown): MisshapenAnswer | undefined {
	return error instanceof MisshapenAnswer ? error : undefined;
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
	const errorForm = errorItemForm(ctx);
	const plans: Array<Plan | undefined> = new Array(items.length);
	// An item's output: one item as it is (the usual case), several in an array. Held until every item is done.
	const results: Array<INodeExecutionData | INodeExecutionData[] | undefined> = new Array(items.length);

	// Check every item before the first paid call: a bad item must not leave others half-paid.
	let sliceStart = performance.now();
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		// Long batches give the event loop a turn now and then: n8n serves other work meanwhile.
		if (performance.now() - sliceStart >= PLAN_SLICE_MS) {
			await sleep(0);
			sliceStart = performance.now();
		}
		try {
			// Most checks are synchronous: awaiting only a promise spares a microtask turn per item.
			const plan = work.plan(itemIndex);
			plans[itemIndex] = plan instanceof Promise ? await plan : plan;
		} catch (error) {
			const itemError = asItemError(ctx, error, itemIndex);
			if (!continueOnFail) throw itemError;
			results[itemIndex] = errorItem(itemError, itemIndex, errorForm);
		}
	}

	/**
	 * A refusal of the whole node before any call (spending cap, send records): under Continue On
	 * Fail every item still waiting becomes an error item, rather than n8n passing the input on.
	 */
	const failPending = (error: unknown) => {
		if (!continueOnFail) throw error;
		const node = ctx.getNode();
		const message = error instanceof Error ? error.message : String(error);
		const description = (error as { description?: unknown }).description;
		for (let itemIndex = 0; itemIndex < results.length; itemIndex++) {
			if (results[itemIndex]) continue;
			const itemError = asNodeError(node, new NodeOperationError(node, message, { description: typeof description === 'string' ? description : undefined, itemIndex }), itemIndex);
			results[itemIndex] = errorItem(itemError, itemIndex, errorForm);
		}
	};
	// `results` has holes until filled: array methods would skip them.
	const anyPending = () => Array.from(results).some((result) => result === undefined);

	if (work.beforeCalls) {
		const pending = new Map<number, Plan>();
		plans.forEach((plan, itemIndex) => {
			if (!results[itemIndex]) pending.set(itemIndex, plan as Plan);
		});
		try {
			const refused = (await work.beforeCalls(pending)) ?? new Map<number, unknown>();
			for (const [itemIndex, error] of [...refused].sort(([a], [b]) => a - b)) {
				const itemError = asItemError(ctx, error, itemIndex);
				if (!continueOnFail) throw itemError;
				results[itemIndex] = errorItem(itemError, itemIndex, errorForm);
			}
		} catch (error) {
			failPending(error);
		}
	}

	const runId = runIdOf(ctx);
	const shared = work.shareAcrossExecution || work.paid ? executionMemory(ctx).answers : new Map<string, SharedAnswer>();
	const meter = work.paid ? spendMeter(ctx, work.paid.client) : undefined;
	// 1 for the item of this run that asks its question first (it reports the price): a byte per item, not a map entry per question.
	const firstAskers = new Uint8Array(items.length);
	if (work.paid && meter && anyPending()) {
		try {
			checkPaidEstimate(work.paid.operation, meter, plans, results, work.shareKey, shared, firstAskers);
		} catch (error) {
			failPending(error);
		}
	}

	const price = work.paid ? priceOf(work.paid.operation) : 0;
	// The client counts every attempt against the cap (transport/gatewayClient.ts). A misshapen answer
	// is billed all the same: kept like a good answer so a re-run does not pay again.
	const load = (plan: Plan, itemIndex: number): Promise<Result | MisshapenAnswer> =>
		work.execute(plan, itemIndex).catch((error: unknown) => misshapenAnswerIn(error) ?? Promise.reject(error));

	const failures: Array<{ itemIndex: number; error: ItemError }> = [];
	let nextIndex = 0;
	const worker = async () => {
		// Without Continue On Fail, the first failure stops new calls; calls in flight finish.
		while (nextIndex < items.length && failures.length === 0) {
			const itemIndex = nextIndex++;
			if (results[itemIndex]) continue;
			const plan = plans[itemIndex] as Plan;
			try {
				const key = work.shareKey?.(plan);
				let result: Result | MisshapenAnswer;
				let costYuan = price;
				if (key === undefined) {
					result = await load(plan, itemIndex);
				} else {
					const { answer, entry } = sharedAnswer(shared, key, runId, () => load(plan, itemIndex));
					result = await answer;
					// The run that paid reports the price once, on its first item with this question.
					if (entry.paidByRun !== runId || firstAskers[itemIndex] !== 1) costYuan = 0;
				}
				const objects = result instanceof MisshapenAnswer ? result.toOutput() : work.output(result, plan, itemIndex);
				const paired = (json: IDataObject): INodeExecutionData => ({ json: work.paid ? { ...json, costYuan } : json, pairedItem: { item: itemIndex } });
				results[itemIndex] = Array.isArray(objects) ? objects.map(paired) : paired(objects);
			} catch (error) {
				const itemError = asItemError(ctx, error, itemIndex);
				if (continueOnFail) {
					results[itemIndex] = errorItem(itemError, itemIndex, errorForm);
				} else {
					failures.push({ itemIndex, error: itemError });
				}
			}
			// Done with: a long batch holds each plan only until its item is answered.
			plans[itemIndex] = undefined;
		}
	};
	const workers = Math.max(1, Math.min(work.concurrency, items.length));
	await Promise.all(Array.from({ length: workers }, worker));

	if (failures.length > 0) {
		throw failures.reduce((first, failure) => (failure.itemIndex < first.itemIndex ? failure : first)).error;
	}
	return results.flatMap((result) => result ?? []);
}

/** The spending-cap check of single-call lookups: one price per distinct question not yet answered in this execution. */
function checkPaidEstimate<Plan>(
	operation: OperationName,
	meter: SpendMeter,
	plans: Array<Plan | undefined>,
	results: Array<INodeExecutionData | INodeExecutionData[] | undefined>,
	shareKey: ((plan: Plan) => string | undefined) | undefined,
	shared: Map<string, SharedAnswer>,
	firstAskers: Uint8Array,
): void {
	let calls = 0;
	const asked = new Set<string>();
	plans.forEach((plan, itemIndex) => {
		if (results[itemIndex]) return;
		const key = shareKey?.(plan as Plan);
		if (key === undefined) {
			calls++;
			return;
		}
		if (asked.has(key)) return;
		asked.add(key);
		firstAskers[itemIndex] = 1;
		if (!shared.has(key)) calls++;
	});
	meter.checkEstimate(calls * priceOf(operation), describeCalls(calls, operation));
}
