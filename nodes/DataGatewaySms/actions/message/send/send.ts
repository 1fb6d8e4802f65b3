import { asNodeError, GatewayFailure, MisshapenAnswer } from '../../../../shared/errors/failures';
import { sendResultSchema } from '../../../../shared/gateway/schemas/sms';
import { callCertainlyFailed, rememberOutcome } from '../../../../shared/state/executionMemory';
import { keptRecordsText, recordsUnavailable } from '../../../../shared/store/sendRecords/open';
import { RecordsFailure } from '../../../../shared/store/sendRecords/sendRecords';
import { costOf, limitRefusal } from './records';
import type { SendOutcome, SendPlan, SendRun, SentRequest } from './run';

const UNKNOWN_OUTCOME_HINT =
	'It was not sent again, to avoid a double message. No task ID came back, so check for it before sending again: a delivery report to this number (SMS Trigger) or the send log of your gateway account; with a task ID, Message > Get Status shows it.';

/** The same failure, reworded to say that the message may have gone out and how to find out. */
function unknownOutcome(error: GatewayFailure, message: string): GatewayFailure {
	return new GatewayFailure({ kind: 'outcome-unknown', operation: 'smsSend', message, httpStatus: error.httpStatus, hint: UNKNOWN_OUTCOME_HINT });
}

/** The error of an item whose send certainly failed: says it was not sent, and what a failed release keeps. */
async function notSent(run: SendRun, plan: SendPlan, error: unknown): Promise<never> {
	const nodeError = asNodeError(run.ctx.getNode(), error, plan.itemIndex);
	if (!/not sent/i.test(nodeError.message)) nodeError.message = `${nodeError.message} (the SMS to ${plan.phone} was not sent)`;
	await run.records.release([plan.itemIndex]).catch((failure: unknown) => {
		if (!(failure instanceof RecordsFailure)) throw failure;
		nodeError.description = `${nodeError.description ?? ''} ${keptRecordsText(failure, run.repeatWindowMinutes)}`.trim();
	});
	throw nodeError;
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
		throw asNodeError(run.ctx.getNode(), unknownOutcome(cause, `not sent again: an earlier attempt in this run to ${plan.phone} has an unknown outcome (${cause.message})`), plan.itemIndex);
	}
	run.outcomes.sentItem(plan.itemIndex, taskId, false);
	const { changed } = earlier;
	return {
		taskId,
		...base,
		deduplicated: true,
		skippedAsRepeat: false,
		costYuan: costOf(plan),
		...plan.size,
		...(changed.length > 0 ? { requestChangedOnRetry: true, changedOnRetry: changed } : {}),
	};
}

/** What the store's records say an earlier try of this very item did (a re-run of the same execution in another process). */
function sendFoundInStore(run: SendRun, plan: SendPlan, base: SendBase, earlier: { outcome: 'sent' | 'unknown'; taskId?: string | null }): SendOutcome {
	if (earlier.outcome === 'unknown') {
		run.outcomes.unknownItem(plan.itemIndex, plan.phone);
		const failure = new GatewayFailure({ kind: 'outcome-unknown', operation: 'smsSend', message: `not sent again: an earlier try of this item in this execution to ${plan.phone} has an unknown outcome` });
		throw asNodeError(run.ctx.getNode(), unknownOutcome(failure, failure.message), plan.itemIndex);
	}
	run.outcomes.sentItem(plan.itemIndex, earlier.taskId ?? null, false);
	return { taskId: earlier.taskId ?? null, ...base, deduplicated: true, skippedAsRepeat: false, costYuan: costOf(plan), ...plan.size };
}

type SendBase = Pick<SendOutcome, 'phone' | 'signId' | 'templateId' | 'sendRecords'>;

/**
 * Sends once per item and run. A re-run of the node (Retry On Fail) hands back the earlier task
 * ID; the item's record turns "outcome unknown" before the paid call, so that whatever happens
 * during it, no execution sends the message again within the window.
 */
export async function sendOnce(run: SendRun, plan: SendPlan): Promise<SendOutcome> {
	const { ctx, client, memory, records, options } = run;
	const skipped = (): SendOutcome => ({ taskId: null, ...base, deduplicated: false, skippedAsRepeat: true, costYuan: 0, ...plan.size });
	const base: SendBase = {
		phone: plan.phone,
		signId: plan.params.signId,
		templateId: plan.params.templateId,
		...(records.store.kind === 'memory' ? { sendRecords: 'this n8n process only' } : {}),
	};
	if (plan.earlier) return await sendFoundInMemory(run, plan, base, plan.earlier);
	const decision = records.decisionOf(plan.itemIndex);
	if (decision?.kind === 'repeat') return skipped();
	if (decision?.kind === 'earlier') return sendFoundInStore(run, plan, base, decision);

	let claimed: Awaited<ReturnType<typeof records.claim>>;
	try {
		claimed = await records.claim(plan.itemIndex);
	} catch (error) {
		throw recordsUnavailable(ctx.getNode(), 'SMS', error, run.repeatWindowMinutes, plan.itemIndex);
	}
	if (claimed === 'taken') return skipped();
	if (claimed !== 'go') throw limitRefusal(run, plan.itemIndex, claimed.limit);

	const entry = {
		outcome: (async () => (await client.call('smsSend', plan.params, sendResultSchema, options)).data.id)(),
		request: { request: plan.params, size: plan.size } satisfies SentRequest,
	};
	let taskId: string;
	try {
		taskId = await rememberOutcome(memory.sends, plan.key, entry);
	} catch (error) {
		// Code 0 without a usable task ID: the gateway took the message, so it is sent, not unknown.
		if (error instanceof MisshapenAnswer) {
			run.meter.add(costOf(plan));
			run.outcomes.sentItem(plan.itemIndex, null, true);
			return sentWithoutTaskId(run, plan, base, error, false);
		}
		// A refusal, or a failure before the request left ('not-sent'): certainly not sent.
		if (!(error instanceof GatewayFailure) || callCertainlyFailed(error)) {
			if (memory.sends.get(plan.key) === entry) memory.sends.delete(plan.key);
			return await notSent(run, plan, error);
		}
		run.meter.add(costOf(plan)); // it may have gone out and be billed
		run.outcomes.unknownItem(plan.itemIndex, plan.phone);
		throw asNodeError(ctx.getNode(), unknownOutcome(error, `outcome unknown, the SMS to ${plan.phone} may have been sent: ${error.message}`), plan.itemIndex);
	}
	run.meter.add(costOf(plan));
	run.outcomes.sentItem(plan.itemIndex, taskId, true);
	return { taskId, ...base, deduplicated: false, skippedAsRepeat: false, costYuan: costOf(plan), ...plan.size };
}

/** A send the gateway accepted (code 0) whose answer carried no usable task ID: sent, with a warning. */
function sentWithoutTaskId(run: SendRun, plan: SendPlan, base: SendBase, answer: MisshapenAnswer, deduplicated: boolean): SendOutcome {
	if (deduplicated) run.outcomes.sentItem(plan.itemIndex, null, false);
	return { taskId: null, ...base, deduplicated, skippedAsRepeat: false, costYuan: costOf(plan), ...plan.size, ...answer.toOutput() };
}
