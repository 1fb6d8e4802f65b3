/**
 * The batch runner of the operations that work item by item. A Batch holds, per input item, its
 * plan (its parameters read and checked), then its answer or its error; callEach makes the calls
 * with bounded concurrency, identical questions sharing one answer. The operation presents the
 * answers afterwards (its own present step, as lookupRun.ts presentItems, or outputEach).
 */
import type { IDataObject, IExecuteFunctions, INode, INodeExecutionData } from 'n8n-workflow';

import { sleep } from 'n8n-workflow';

import { MisshapenAnswer } from '../errors/failures';
import { executionMemory, runIdOf, sharedAnswer, type SharedAnswer } from '../state/executionMemory';
import { asItemError, errorItem, errorItemForm, wholeNodeRefusal, type ItemError } from './errorItems';

/** What callEach asks of an operation for each item still waiting. */
export interface ItemCalls<Plan, Answer> {
	/** Items processed at once; the credential's limiter still bounds the gateway calls. */
	readonly concurrency: number;
	/**
	 * Identical questions share one call: the item's question, or undefined for a call of its own.
	 * Shared within this run, or with every run and node of the execution (`shareAcrossExecution`).
	 */
	shareKey?(plan: Plan): string | undefined;
	readonly shareAcrossExecution?: boolean;
	/** The item's call. A MisshapenAnswer it throws (code 0, billed) is the item's answer, kept like a good one. */
	ask(plan: Plan, itemIndex: number): Promise<Answer>;
}

/**
 * The SMS operations' checks (planEach) take up to 1 ms an item: a long batch gives n8n's event loop
 * a turn every 50 ms, so that calls in flight elsewhere in n8n are not held past their Timeouts. A
 * turn costs at least 1 ms (n8n's sleep is a timer): every 16 ms the turns were about 0.5 s of a
 * 10,000-number send's checks (bench section 12). The lookups check in one pass, as n8n's own
 * nodes do (lookupRun.ts says why).
 */
const CHECKS_SLICE_MS = 50;

const ANSWERED = 1;
/** The answer came from a call this run made (not from an earlier run or node). */
const CALLED_BY_RUN = 2;

/**
 * One run's items: each one's plan, then its answer or its error. Arrays by item rather than an
 * object per item: a long batch holds them all until it is presented.
 */
export class Batch<Plan, Answer = unknown> {
	readonly node: INode;
	readonly size: number;
	readonly continueOnFail: boolean;
	readonly plans: Array<Plan | undefined>;
	readonly answers: Array<Answer | MisshapenAnswer | undefined>;
	readonly errors: Array<ItemError | undefined>;
	private readonly flags: Uint8Array;
	private sliceStart = performance.now();

	constructor(readonly ctx: IExecuteFunctions) {
		// Read once: n8n's getNode() deep-copies the node at every call.
		this.node = ctx.getNode();
		this.size = ctx.getInputData().length;
		this.continueOnFail = ctx.continueOnFail();
		this.plans = new Array(this.size);
		this.answers = new Array(this.size);
		this.errors = new Array(this.size);
		this.flags = new Uint8Array(this.size);
	}

	/** Long batches of checks give the event loop a turn now and then: n8n serves other work meanwhile. */
	async giveTurn(): Promise<void> {
		if (performance.now() - this.sliceStart < CHECKS_SLICE_MS) return;
		await sleep(0);
		this.sliceStart = performance.now();
	}

	/** The item's error: it stops the node, unless Continue On Fail makes it the item's output. */
	fail(itemIndex: number, error: unknown): void {
		const itemError = this.record(itemIndex, error);
		if (!this.continueOnFail) throw itemError;
	}

	/** Items refused before any call (each with its own error), in item order. */
	refuse(refused: Map<number, unknown>): void {
		for (const [itemIndex, error] of [...refused].sort(([a], [b]) => a - b)) this.fail(itemIndex, error);
	}

	/**
	 * A refusal of the whole node before any call (spending cap, send records): under Continue On
	 * Fail every item still waiting becomes an error item, rather than n8n passing the input on.
	 */
	refuseAll(error: unknown): void {
		if (!this.continueOnFail) throw error;
		for (const itemIndex of this.waiting()) this.record(itemIndex, wholeNodeRefusal(this.node, error, itemIndex));
	}

	/** The items with a plan and neither answer nor error, in item order. */
	*waiting(): Generator<number> {
		for (let itemIndex = 0; itemIndex < this.size; itemIndex++) if (this.isWaiting(itemIndex)) yield itemIndex;
	}

	isWaiting(itemIndex: number): boolean {
		return this.flags[itemIndex] === 0 && this.errors[itemIndex] === undefined;
	}

	isAnswered(itemIndex: number): boolean {
		return (this.flags[itemIndex] & ANSWERED) !== 0;
	}

	/** Whether the item's answer came from a call of this run (it may report the price). */
	calledByRun(itemIndex: number): boolean {
		return (this.flags[itemIndex] & CALLED_BY_RUN) !== 0;
	}

	answer(itemIndex: number, answer: Answer | MisshapenAnswer, calledByRun: boolean): void {
		this.answers[itemIndex] = answer;
		this.flags[itemIndex] = calledByRun ? ANSWERED | CALLED_BY_RUN : ANSWERED;
	}

	/** Records the item's error, redacted and naming the item. */
	record(itemIndex: number, error: unknown): ItemError {
		const itemError = asItemError(this.node, error, itemIndex);
		this.errors[itemIndex] = itemError;
		return itemError;
	}
}

/**
 * Reads and checks every item with `plan` before the first paid call (a bad item must not leave
 * others half-paid). For operations that plan with a function of their own; lookups plan in lookupRun.ts.
 */
export async function planEach<Plan, Answer>(ctx: IExecuteFunctions, plan: (itemIndex: number) => Plan | Promise<Plan>): Promise<Batch<Plan, Answer>> {
	const batch = new Batch<Plan, Answer>(ctx);
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		await batch.giveTurn();
		try {
			// Most checks are synchronous: awaiting only a promise spares a microtask turn per item.
			const planned = plan(itemIndex);
			batch.plans[itemIndex] = planned instanceof Promise ? await planned : planned;
		} catch (error) {
			batch.fail(itemIndex, error);
		}
	}
	return batch;
}

/**
 * The gateway calls of every waiting item, `concurrency` at once, in item order; identical
 * questions share one answer. Without Continue On Fail the first failure stops new calls (calls
 * in flight finish) and the failure of the lowest item is thrown.
 */
export async function callEach<Plan, Answer>(batch: Batch<Plan, Answer>, calls: ItemCalls<Plan, Answer>): Promise<void> {
	const runId = runIdOf(batch.ctx);
	const shared = calls.shareAcrossExecution ? executionMemory(batch.ctx).answers : new Map<string, SharedAnswer>();
	let stopped: number | undefined;
	let nextIndex = 0;
	const worker = async () => {
		while (nextIndex < batch.size && stopped === undefined) {
			const itemIndex = nextIndex++;
			if (!batch.isWaiting(itemIndex)) continue;
			try {
				await answerItem(batch, calls, shared, runId, itemIndex);
			} catch (error) {
				batch.record(itemIndex, error);
				if (!batch.continueOnFail) stopped = Math.min(stopped ?? itemIndex, itemIndex);
			}
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(calls.concurrency, batch.size)) }, worker));
	if (stopped !== undefined) throw firstError(batch);
}

/** The lowest item's error: the one n8n shows when the node stops. */
function firstError(batch: Batch<unknown>): ItemError {
	return batch.errors.find((error) => error !== undefined) as ItemError;
}

async function answerItem<Plan, Answer>(batch: Batch<Plan, Answer>, calls: ItemCalls<Plan, Answer>, shared: Map<string, SharedAnswer>, runId: string, itemIndex: number) {
	const plan = batch.plans[itemIndex] as Plan;
	// The client counts every attempt against the cap (transport/gatewayClient.ts). A misshapen answer
	// is billed all the same: kept like a good answer so a re-run does not pay again.
	const load = () => calls.ask(plan, itemIndex).catch((error: unknown) => (error instanceof MisshapenAnswer ? error : Promise.reject(error)));
	const key = calls.shareKey?.(plan);
	if (key === undefined) {
		batch.answer(itemIndex, await load(), true);
		return;
	}
	const { answer, entry } = sharedAnswer(shared, key, runId, load);
	batch.answer(itemIndex, await answer, entry.paidByRun === runId);
}

/**
 * The output of every item in input order, each paired with its item: `output`'s objects, a
 * misshapen answer's warning, or under Continue On Fail the item's error item.
 */
export function outputEach<Plan, Answer>(batch: Batch<Plan, Answer>, output: (answer: Answer, plan: Plan, itemIndex: number) => IDataObject | IDataObject[]): INodeExecutionData[] {
	const form = errorItemForm(batch.ctx);
	const items: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		const error = batch.errors[itemIndex];
		if (error) {
			items.push(errorItem(error, itemIndex, form));
			continue;
		}
		if (!batch.isAnswered(itemIndex)) continue;
		const answer = batch.answers[itemIndex];
		const objects = answer instanceof MisshapenAnswer ? answer.toOutput() : output(answer as Answer, batch.plans[itemIndex] as Plan, itemIndex);
		for (const json of Array.isArray(objects) ? objects : [objects]) items.push({ json, pairedItem: { item: itemIndex } });
	}
	return items;
}

/** What runForEachItem does for one operation. */
export interface ItemWork<Plan, Answer> {
	/** Reads and checks the item's parameters. Throws (naming the field) before anything is paid. */
	plan: (itemIndex: number) => Plan | Promise<Plan>;
	/**
	 * Runs once after every item is checked and before the first call, with the plans still to call.
	 * Returns the items it refuses (they become errors like failed checks); what it throws refuses the whole node.
	 */
	beforeCalls?: (plans: Map<number, Plan>) => Promise<Map<number, unknown> | void>;
	execute: (plan: Plan, itemIndex: number) => Promise<Answer>;
	/** One or more output objects for the item; each is paired with the item. */
	output: (answer: Answer, plan: Plan, itemIndex: number) => IDataObject | IDataObject[];
	concurrency: number;
}

/**
 * The SMS operations' runner: plan every item, then `beforeCalls`, then the calls (each item its
 * own), then the output in input order. The lookups run the same steps one by one (lookupRun.ts).
 */
export async function runForEachItem<Plan, Answer>(ctx: IExecuteFunctions, work: ItemWork<Plan, Answer>): Promise<INodeExecutionData[]> {
	const batch = await planEach<Plan, Answer>(ctx, work.plan);
	if (work.beforeCalls) {
		const pending = new Map<number, Plan>();
		for (const itemIndex of batch.waiting()) pending.set(itemIndex, batch.plans[itemIndex] as Plan);
		try {
			batch.refuse((await work.beforeCalls(pending)) ?? new Map());
		} catch (error) {
			batch.refuseAll(error);
		}
	}
	await callEach(batch, { concurrency: work.concurrency, ask: work.execute });
	return outputEach(batch, work.output);
}
