import type { IDataObject } from 'n8n-workflow';

import { GatewayFailure, MisshapenAnswer } from '../../../../shared/errors/failures';
import { sendResultSchema } from '../../../../shared/gateway/schemas/sms';
import { smsCostYuan } from '../../../../shared/money/smsCost';
import { callCertainlyFailed, rememberOutcome } from '../../../../shared/state/executionMemory';
import type { ClaimAnswer } from '../../../../shared/store/sendRecords/sendRecords';
import type { EarlyTurn } from '../../../../shared/transport/gatewayClient';
import { limitRefusal, notSentError, recordsUnavailable, unknownOutcomeError, withKeptRecords } from '../../sendErrors';
import { notLeavingError } from './guards';
import { leavingGate, skipsNotLeaving, type NotLeaving } from './leaving';
import { outcomeFields } from './plainWords';
import type { SendOutcome, SendPlan, SendRun, SentRequest } from './sendRun';

type SendBase = Pick<SendOutcome, 'phone' | 'signId' | 'templateId' | 'sendRecords'>;

/** What every outcome of the item says: its request, where its records are. */
function baseOf(run: SendRun, plan: SendPlan): SendBase {
	return {
		phone: plan.phone,
		signId: plan.params.signId,
		templateId: plan.params.templateId,
		...(run.records.store.kind === 'memory' ? { sendRecords: 'this n8n process only' } : {}),
	};
}

/**
 * Sends once per item and run. A re-run of the node (Retry On Fail) hands back the earlier task
 * ID; another execution's send of the same message within the repeat window is skipped; else the
 * item's record turns "outcome unknown" (claimSend) before the paid call (callGateway), so that
 * whatever happens during it, no execution sends the message again within the window.
 */
async function sendOnce(run: SendRun, plan: SendPlan): Promise<SendOutcome> {
	const base = baseOf(run, plan);
	if (plan.earlier) return await sendFoundInMemory(run, plan, base, plan.earlier);
	const optedOut = run.notLeaving.get(plan.itemIndex);
	if (optedOut) return notSentNow(run, plan, base, optedOut);
	const decision = run.decisions.get(plan.itemIndex);
	if (decision?.kind === 'repeat') return skippedAsRepeat(plan, base);
	if (decision?.kind === 'earlier') return sendFoundInStore(run, plan, base, decision);
	// The paid call's first turn, asked for alongside the claim: with a shared rate their Redis round trips overlap.
	const turn = run.client.firstTurn('smsSend', run.options.signal);
	const claimed = await claimSend(run, plan).catch((error: unknown) => {
		turn?.drop();
		throw error;
	});
	if (claimed !== 'go') turn?.drop();
	if (claimed === 'taken') return skippedAsRepeat(plan, base);
	if (claimed !== 'go' && 'stopped' in claimed) return notSentNow(run, plan, base, claimed.stopped);
	if (claimed !== 'go') throw limitRefusal(run.ctx.getNode(), plan.itemIndex, claimed.limit);
	return await callGateway(run, plan, base, turn);
}

const skippedAsRepeat = (plan: SendPlan, base: SendBase): SendOutcome => ({ taskId: null, ...base, deduplicated: false, skippedAsRepeat: true, costYuan: 0, ...plan.size });

/** A message that must not leave (leaving.ts): from SMS 1.5 an item saying why; before, the item's error. Its reservation is released at the end (finish.ts). */
function notSentNow(run: SendRun, plan: SendPlan, base: SendBase, why: NotLeaving): SendOutcome {
	if (!skipsNotLeaving(run.node) || why.reason === 'opt-out-unreadable') throw notLeavingError(run.node, plan.itemIndex, plan.phone, why, run.records.store.label);
	return { taskId: null, ...base, deduplicated: false, skippedAsRepeat: false, costYuan: 0, ...plan.size, notLeaving: why };
}

/**
 * Just before the paid call, in one store update: the opt-out list and the Send Window again
 * (leaving.ts), then the item's record becomes "outcome unknown" (or the message was taken over,
 * or a limit is full).
 */
async function claimSend(run: SendRun, plan: SendPlan): Promise<ClaimAnswer<NotLeaving>> {
	try {
		return await run.records.claim(plan.itemIndex, leavingGate(await run.optOuts(), plan.phone, plan.window));
	} catch (error) {
		throw recordsUnavailable(run.ctx.getNode(), 'SMS', error, run.records.repeatWindowMinutes, plan.itemIndex);
	}
}

/** The paid call, its answer kept in the execution's memory for Retry On Fail; what it cost is counted. */
async function callGateway(run: SendRun, plan: SendPlan, base: SendBase, turn: EarlyTurn | undefined): Promise<SendOutcome> {
	const { ctx, client, memory, options } = run;
	const entry = {
		outcome: (async () => (await client.call('smsSend', plan.params, sendResultSchema, turn ? { ...options, turn } : options)).data.id)(),
		request: { request: plan.params, size: plan.size } satisfies SentRequest,
	};
	let taskId: string;
	try {
		taskId = await rememberOutcome(memory.sends, plan.key, entry);
	} catch (error) {
		// Code 0 without a usable task ID: the gateway took the message, so it is sent, not unknown.
		if (error instanceof MisshapenAnswer) {
			await run.meter.spend(smsCostYuan(plan.size));
			sentNow(run, plan.itemIndex, null);
			return sentWithoutTaskId(run, plan, base, error, false);
		}
		// A refusal, or a failure before the request left ('not-sent'): certainly not sent.
		if (!(error instanceof GatewayFailure) || callCertainlyFailed(error)) {
			if (memory.sends.get(plan.key) === entry) memory.sends.delete(plan.key);
			throw await notSent(run, plan, error);
		}
		await run.meter.spend(smsCostYuan(plan.size)); // it may have gone out and be billed
		run.outcomes.unknownItem(plan.itemIndex, plan.phone);
		throw unknownOutcomeError(ctx.getNode(), plan.itemIndex, `outcome unknown, the SMS to ${plan.phone} may have been sent: ${error.message}`, error);
	}
	await run.meter.spend(smsCostYuan(plan.size));
	sentNow(run, plan.itemIndex, taskId);
	return { taskId, ...base, deduplicated: false, skippedAsRepeat: false, costYuan: smsCostYuan(plan.size), ...plan.size };
}

/** The gateway took the item's message: noted for the batch's end, its record marked sent with others while the batch goes on. */
function sentNow(run: SendRun, itemIndex: number, taskId: string | null): void {
	run.outcomes.sentItem(itemIndex, taskId, true);
	run.records.markSentSoon(itemIndex, taskId);
}

/** The error of an item whose send certainly failed, its records released (or what a failed release keeps, named). */
async function notSent(run: SendRun, plan: SendPlan, error: unknown) {
	const nodeError = notSentError(run.ctx.getNode(), error, plan.itemIndex, plan.phone);
	await run.records.release([plan.itemIndex]).catch((failure: unknown) => withKeptRecords(nodeError, failure, run.records.repeatWindowMinutes));
	return nodeError;
}

/** A Retry On Fail re-run of an item this execution's memory has: the earlier send stands. */
async function sendFoundInMemory(run: SendRun, plan: SendPlan, base: SendBase, earlier: NonNullable<SendPlan['earlier']>): Promise<SendOutcome> {
	let taskId: string;
	try {
		taskId = await earlier.outcome;
	} catch (error) {
		if (error instanceof MisshapenAnswer) return sentWithoutTaskId(run, plan, base, error, true);
		run.outcomes.unknownItem(plan.itemIndex, plan.phone);
		const cause = error instanceof GatewayFailure ? error : new GatewayFailure({ kind: 'outcome-unknown', operation: 'smsSend', message: String(error) });
		throw unknownOutcomeError(run.ctx.getNode(), plan.itemIndex, `not sent again: an earlier attempt in this run to ${plan.phone} has an unknown outcome (${cause.message})`, cause);
	}
	run.outcomes.sentItem(plan.itemIndex, taskId, false);
	const { changed } = earlier;
	return {
		taskId,
		...base,
		deduplicated: true,
		skippedAsRepeat: false,
		costYuan: smsCostYuan(plan.size),
		...plan.size,
		...(changed.length > 0 ? { requestChangedOnRetry: true, changedOnRetry: changed } : {}),
	};
}

/** What the store's records say an earlier try of this very item did (a re-run of the same execution in another process). */
function sendFoundInStore(run: SendRun, plan: SendPlan, base: SendBase, earlier: { outcome: 'sent' | 'unknown'; taskId?: string | null }): SendOutcome {
	if (earlier.outcome === 'unknown') {
		run.outcomes.unknownItem(plan.itemIndex, plan.phone);
		throw unknownOutcomeError(run.ctx.getNode(), plan.itemIndex, `not sent again: an earlier try of this item in this execution to ${plan.phone} has an unknown outcome`);
	}
	run.outcomes.sentItem(plan.itemIndex, earlier.taskId ?? null, false);
	return { taskId: earlier.taskId ?? null, ...base, deduplicated: true, skippedAsRepeat: false, costYuan: smsCostYuan(plan.size), ...plan.size };
}

/** A send the gateway accepted (code 0) whose answer carried no usable task ID: sent, with a warning. */
function sentWithoutTaskId(run: SendRun, plan: SendPlan, base: SendBase, answer: MisshapenAnswer, deduplicated: boolean): SendOutcome {
	if (deduplicated) run.outcomes.sentItem(plan.itemIndex, null, false);
	return { taskId: null, ...base, deduplicated, skippedAsRepeat: false, costYuan: smsCostYuan(plan.size), ...plan.size, ...answer.toOutput() };
}

/** The send step of the operations: sends once, and notes the task ID with the item's Reference for its delivery report. */
export async function sendItem(run: SendRun, plan: SendPlan): Promise<SendOutcome> {
	return run.deliveries.sent(plan.itemIndex, await sendOnce(run, plan), plan.phone);
}

/** The item's output: its outcome and its Reference. */
export function presentSend(run: SendRun, outcome: SendOutcome, itemIndex: number): IDataObject {
	return { ...outcomeFields(run.node, outcome, run.records.repeatWindowMinutes), ...run.deliveries.outputOf(itemIndex) };
}
