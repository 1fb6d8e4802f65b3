import { asNodeError, GatewayFailure, MisshapenAnswer } from '../../../../shared/errors/failures';
import { sendResultSchema } from '../../../../shared/gateway/schemas/sms';
import { callCertainlyFailed, rememberOutcome } from '../../../../shared/state/executionMemory';
import { costOf, releaseUnsent } from './records';
import type { SendOutcome, SendPlan, SendRun, SentRequest } from './run';

const UNKNOWN_OUTCOME_HINT =
	'It was not sent again, to avoid a double message. No task ID came back, so check for it before sending again: a delivery report to this number (SMS Trigger) or the send log of your gateway account; with a task ID, Message > Get Status shows it.';

/** The same failure, reworded to say that the message may have gone out and how to find out. */
function unknownOutcome(error: GatewayFailure, message: string): GatewayFailure {
	return new GatewayFailure({ kind: 'outcome-unknown', operation: 'smsSend', message, httpStatus: error.httpStatus, hint: UNKNOWN_OUTCOME_HINT });
}

/** Sends once per item and run; a re-run of the node (Retry On Fail) hands back the earlier task ID. */
export async function sendOnce(run: SendRun, plan: SendPlan): Promise<SendOutcome> {
	const { ctx, client, memory, records, options } = run;
	const base = {
		phone: plan.phone,
		signId: plan.params.signId,
		templateId: plan.params.templateId,
		...(records.acrossRestarts ? {} : { sendRecords: 'this n8n process only' }),
	};
	const earlier = plan.earlier;
	if (!earlier && run.decisions.get(plan.itemIndex)?.kind === 'repeat') {
		return { taskId: null, ...base, deduplicated: false, skippedAsRepeat: true, costYuan: 0, ...plan.size };
	}
	let taskId: string;
	if (earlier) {
		try {
			taskId = await earlier.outcome;
		} catch (error) {
			if (error instanceof MisshapenAnswer) return sentWithoutTaskId(run, plan, base, error, true);
			run.unknown.set(plan.itemIndex, plan.phone);
			const cause = error instanceof GatewayFailure ? error : new GatewayFailure({ kind: 'outcome-unknown', operation: 'smsSend', message: String(error) });
			throw asNodeError(ctx.getNode(), unknownOutcome(cause, `not sent again: an earlier attempt in this run to ${plan.phone} has an unknown outcome (${cause.message})`), plan.itemIndex);
		}
		const { changed } = earlier;
		run.sent.set(plan.itemIndex, taskId);
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

	run.attempted.add(plan.itemIndex);
	const entry = {
		outcome: (async () => (await client.call('smsSend', plan.params, sendResultSchema, options)).data.id)(),
		request: { request: plan.params, size: plan.size } satisfies SentRequest,
	};
	try {
		taskId = await rememberOutcome(memory.sends, plan.key, entry);
	} catch (error) {
		// Code 0 without a usable task ID: the gateway took the message, so it is sent, not unknown.
		if (error instanceof MisshapenAnswer) {
			run.meter.add(costOf(plan));
			return sentWithoutTaskId(run, plan, base, error, false);
		}
		// A refusal, or a failure before the request left ('not-sent'): certainly not sent.
		if (!(error instanceof GatewayFailure) || callCertainlyFailed(error)) {
			if (memory.sends.get(plan.key) === entry) memory.sends.delete(plan.key);
			await records.release([plan.itemIndex]);
			const nodeError = asNodeError(ctx.getNode(), error, plan.itemIndex);
			if (!/not sent/i.test(nodeError.message)) nodeError.message = `${nodeError.message} (the SMS to ${plan.phone} was not sent)`;
			throw nodeError;
		}
		run.meter.add(costOf(plan)); // it may have gone out and be billed
		run.unknown.set(plan.itemIndex, plan.phone);
		const failure = error as GatewayFailure;
		throw asNodeError(ctx.getNode(), unknownOutcome(failure, `outcome unknown, the SMS to ${plan.phone} may have been sent: ${failure.message}`), plan.itemIndex);
	}
	run.meter.add(costOf(plan));
	run.sent.set(plan.itemIndex, taskId);
	return { taskId, ...base, deduplicated: false, skippedAsRepeat: false, costYuan: costOf(plan), ...plan.size };
}

/** A send the gateway accepted (code 0) whose answer carried no usable task ID: sent, with a warning. */
function sentWithoutTaskId(run: SendRun, plan: SendPlan, base: Pick<SendOutcome, 'phone' | 'signId' | 'templateId' | 'sendRecords'>, answer: MisshapenAnswer, deduplicated: boolean): SendOutcome {
	run.sent.set(plan.itemIndex, 'without a task ID');
	return { taskId: null, ...base, deduplicated, skippedAsRepeat: false, costYuan: costOf(plan), ...plan.size, ...answer.toOutput() };
}

const byItem = <T>(entries: Map<number, T>) => [...entries].sort(([a], [b]) => a - b);

/**
 * The error that stopped the batch, naming the items already sent and every item whose outcome is
 * unknown: their records stay, so a retried execution sends only the rest.
 */
export function withBatchOutcomes(run: SendRun, error: unknown): unknown {
	if (!(error instanceof Error) || (run.sent.size === 0 && run.unknown.size === 0)) return error;
	const retried = run.repeatWindowMinutes > 0 ? 'not sent again when the execution is retried' : 'a retried execution sends them again, as the repeat window is 0';
	const notes: string[] = [];
	if (run.sent.size > 0) {
		notes.push(`[already sent, and ${retried}: ${byItem(run.sent).map(([itemIndex, taskId]) => `item ${itemIndex + 1} (task ${taskId})`).join(', ')}]`);
	}
	if (run.unknown.size > 0) {
		const items = byItem(run.unknown).map(([itemIndex, phone]) => `item ${itemIndex + 1} (${phone})`);
		notes.push(`[outcome unknown, may have been sent; they stay recorded, so ${retried.replace('them', 'these')}: ${items.join(', ')}]`);
	}
	error.message = `${error.message} ${notes.join(' ')}`;
	return error;
}

/** Runs the sends of one node run, then lets go of what was never sent and names what was. */
export async function runSends<T>(run: SendRun, batch: () => Promise<T>): Promise<T> {
	const outcome = await batch().then(
		(result) => ({ result }),
		(error: unknown) => ({ error }),
	);
	await releaseUnsent(run);
	if ('error' in outcome) throw withBatchOutcomes(run, outcome.error);
	return outcome.result;
}
