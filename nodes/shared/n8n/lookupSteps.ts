/**
 * The steps of a lookup run between reading the items and presenting them (lookupRun.ts runs them
 * in order): take kept answers, reserve the day's telephone quota, check the spending cap, and the
 * gateway call of one item (LookupCalls, which the batch runner calls item by item).
 */
import { NodeOperationError } from 'n8n-workflow';

import { GatewayFailure } from '../errors/failures';
import { countCall, noteBudget, noteLookupRun } from '../money/bill';
import { describeCalls, priceOf } from '../money/spend';
import { keepForLater, takeKeptAnswers } from '../lookups/reuse';
import { countCalls, quotaLine, quotaRefusal, reserveCalls } from '../lookups/telephoneQuota';
import { noteRefused } from '../usage/notes';
import { openGuardScope } from '../store/guardScope';
import { SharedAnswer } from '../state/executionMemory';
import { shareStrings } from '../state/sharedStrings';
import { spendMeter } from '../transport/clientForNode';
import type { QueryValue } from '../transport/gatewayClient';
import type { Batch, ItemCalls } from './batch';
import { DatedAnswer, type Answered, type Lookup, type LookupPlan } from './lookupDefinition';

type Params = Record<string, QueryValue>;
export type LookupBatch<P, A> = Batch<LookupPlan<P>, Answered<A>>;

/**
 * Answers from earlier executions sit in the execution's memory under a key of their own, so that
 * only nodes with Reuse Answers For get them; an answer paid in this execution serves every node.
 */
const keptKey = (question: string) => `${question}|from an earlier execution`;

/** Take kept answers (Reuse Answers For) into the execution's memory; returns the questions they answer. */
export async function takeKeptLookups<P extends Params, A>(lookup: Lookup<P, A>, batch: LookupBatch<P, A>): Promise<Set<string>> {
	const { memory, hints, definition } = lookup;
	const kept = new Set<string>();
	if (!memory) return kept;
	const windows = new Map<string, number>();
	for (const itemIndex of batch.waiting()) {
		const { choices, question } = batch.plans[itemIndex] as LookupPlan<P>;
		const { reuseMs } = choices;
		// Read again even when another node took it: this node's window may be shorter.
		if (reuseMs > 0 && !memory.has(question)) windows.set(question, Math.max(reuseMs, windows.get(question) ?? 0));
	}
	for (const [question, { answer, answeredAt }] of await takeKeptAnswers(hints, definition.schema, windows, 'questions')) {
		if (!memory.has(keptKey(question))) memory.set(keptKey(question), SharedAnswer.of(new DatedAnswer(answer, answeredAt, true), 'an earlier execution'));
		kept.add(question);
	}
	return kept;
}

/** The gateway call of one item, with what the run counts: the calls that left, and the answers kept for later. */
export class LookupCalls<P extends Params, A> implements ItemCalls<LookupPlan<P>, Answered<A>> {
	readonly concurrency: number;
	readonly shareAcrossExecution: boolean;
	/** Calls that left for the gateway: they count against its quota whatever it answered. */
	attempted = 0;

	constructor(
		private readonly lookup: Lookup<P, A>,
		/** Questions answered by kept answers (takeKeptLookups). */
		private readonly kept: Set<string>,
	) {
		this.concurrency = lookup.client.settings.limiter.maxConcurrent;
		this.shareAcrossExecution = lookup.reusable;
	}

	shareKey(plan: LookupPlan<P>): string {
		return plan.choices.reuseMs > 0 && this.kept.has(plan.question) ? keptKey(plan.question) : plan.question;
	}

	/** Call the gateway, then keep the answer for later executions when the item asks for it. */
	async ask(plan: LookupPlan<P>): Promise<Answered<A>> {
		const data = await this.callGateway(plan);
		return plan.choices.reuseMs > 0 ? await this.keepAnswer(plan, data) : data;
	}

	private async callGateway(plan: LookupPlan<P>): Promise<A> {
		const { client, definition, options, ctx } = this.lookup;
		let data: A;
		try {
			data = (await client.call(definition.operation, plan.params, definition.schema, options)).data;
		} catch (error) {
			if (!(error instanceof GatewayFailure && (error.kind === 'not-sent' || error.kind === 'cancelled'))) this.attempted++;
			// The batch runner makes it the item's node error (and keeps a misshapen answer as the answer).
			return await Promise.reject(error);
		}
		countCall(ctx);
		this.attempted++;
		if (this.lookup.strings) shareStrings(data, this.lookup.strings);
		return data;
	}

	/** Keep answers (Reuse Answers For): the answer dated by the store, or as it is when the store failed (the hint says so). */
	private async keepAnswer(plan: LookupPlan<P>, data: A): Promise<Answered<A>> {
		const phone = this.lookup.definition.phoneOf?.(plan.params);
		const answeredAt = await keepForLater(this.lookup.hints, plan.question, data, plan.choices.reuseMs, 'this answer', phone);
		return answeredAt === undefined ? data : new DatedAnswer(data, answeredAt, false);
	}
}

/** Today's telephone calls reserved for this run (Free Quota plan), and the questions beyond them. */
export interface QuotaReservation {
	day: string;
	resetsAt: string;
	used: number;
	granted: number;
	beyond: Set<string>;
}

/** Reserve the day's quota: the distinct questions still to call, in item order; the first ones get the day's room. */
export async function reserveQuota<P extends Params, A>(lookup: Lookup<P, A>, batch: LookupBatch<P, A>, calls: LookupCalls<P, A>): Promise<QuotaReservation | undefined> {
	const plan = lookup.telephonePlan;
	if (!plan?.refuseBeyondQuota) return undefined;
	const needed = new Set<string>();
	for (const itemIndex of batch.waiting()) {
		const key = calls.shareKey(batch.plans[itemIndex] as LookupPlan<P>);
		if (!lookup.memory?.has(key)) needed.add(key);
	}
	if (needed.size === 0) return undefined;
	const reserved = await lookup.hints.attempt('The telephone quota', 'calls were not limited this run', async (store) => await reserveCalls(await openGuardScope(store, lookup.client.guard, undefined), plan, needed.size));
	return reserved && { ...reserved, beyond: new Set([...needed].slice(reserved.granted)) };
}

/** The items whose question the day has no room for fail before any call. */
export function refuseBeyondQuota<P extends Params, A>(lookup: Lookup<P, A>, batch: LookupBatch<P, A>, calls: LookupCalls<P, A>, reservation: QuotaReservation | undefined): void {
	if (!lookup.telephonePlan || !reservation || reservation.beyond.size === 0) return;
	const refusal = quotaRefusal(lookup.telephonePlan, reservation.used + reservation.granted, reservation.resetsAt);
	const refused = new Map<number, unknown>();
	for (const itemIndex of batch.waiting()) {
		if (reservation.beyond.has(calls.shareKey(batch.plans[itemIndex] as LookupPlan<P>))) {
			refused.set(itemIndex, new NodeOperationError(lookup.node, refusal.message, { description: refusal.description, itemIndex }));
		}
	}
	batch.refuse(refused);
	noteRefused(lookup.ctx, 'quota', reservation.beyond.size);
}

/** Count the calls made against the day (giving back reserved ones not made); the bill shows the day's count. */
export async function settleQuota<P extends Params, A>(lookup: Lookup<P, A>, reservation: QuotaReservation | undefined, attempted: number): Promise<void> {
	const plan = lookup.telephonePlan;
	if (!plan) return;
	const change = reservation ? attempted - reservation.granted : attempted;
	const count = await lookup.hints.attempt('The telephone quota', "today's calls were not counted", async (store) => await countCalls(await openGuardScope(store, lookup.client.guard, undefined), reservation?.day, change), {
		courtesy: !plan.refuseBeyondQuota,
	});
	if (count !== undefined) noteLookupRun(lookup.ctx, { notes: [quotaLine(plan, count)] });
}

/**
 * Check the spending cap and budgets before the first paid call: one price per distinct question
 * not yet answered in this execution, reserved at once. Returns the item of this run that asks each question first (1 in
 * its place): it reports the price. A refusal fails every waiting item.
 */
export async function checkSpendingCap<P extends Params, A>(lookup: Lookup<P, A>, batch: LookupBatch<P, A>, calls: LookupCalls<P, A>): Promise<Uint8Array | undefined> {
	if (!lookup.paid) return undefined;
	// A byte per item, not a map entry per question.
	const firstAskers = new Uint8Array(batch.size);
	let newCalls = 0;
	const asked = new Set<string>();
	for (const itemIndex of batch.waiting()) {
		const key = calls.shareKey(batch.plans[itemIndex] as LookupPlan<P>);
		if (asked.has(key)) continue;
		asked.add(key);
		firstAskers[itemIndex] = 1;
		if (!lookup.memory?.has(key)) newCalls++;
	}
	const { operation } = lookup.definition;
	if (newCalls > 0) {
		// Reserves the estimate in the store (the cap, the budgets); each call then takes from it.
		const refusal = await spendMeter(lookup.ctx, lookup.client).reserveEstimate(newCalls * priceOf(operation), describeCalls(newCalls, operation), { calls: newCalls });
		if (refusal) batch.refuseAll(refusal);
	}
	return firstAskers;
}

/** Gives back what the run reserved and did not spend; the bill shows the budgets' line. */
export async function settleSpend<P extends Params, A>(lookup: Lookup<P, A>): Promise<void> {
	noteBudget(lookup.ctx, await spendMeter(lookup.ctx, lookup.client).settle());
}
