import { inputError } from '../../../../shared/errors/failures';
import { keptRecordsText, recordsUnavailable } from '../../../../shared/store/sendRecords/open';
import type { SendDecision } from '../../../../shared/store/sendRecords/rules';
import { RecordsFailure } from '../../../../shared/store/sendRecords/sendRecords';
import { priceOf, roundYuan } from '../../../../shared/money/spend';
import { plural } from '../../../../shared/output/plural';
import type { SendPlan, SendRun } from './run';

/** What a send costs when delivered: segments × price when the text is known, else one message. */
export const costOf = (plan: SendPlan): number => plan.size?.estimatedCostYuan ?? priceOf('smsSend');

/** How the cap counted the messages' lengths, for the cap error and the execution hint. */
function lengthNote(plans: SendPlan[]): string {
	const from = (source: SendPlan['lengthFrom']) => plans.filter((plan) => plan.size && plan.lengthFrom === source).length;
	const unknown = plans.filter((plan) => !plan.size).length;
	const parts: string[] = [];
	if (from('gateway') > 0) parts.push(`${plural(from('gateway'), 'length')} from the signature and template read from the gateway (free queries)`);
	if (from('options') > 0) parts.push(`${plural(from('options'), 'length')} from Signature Text and Template Content in Options`);
	if (unknown > 0) parts.push(`${plural(unknown, 'SMS', 'SMS')} of unknown length counted as one segment each`);
	return parts.join('; ');
}

/** A per-number limit refusal of one item: names the number, the window and the fix. */
export function limitRefusal(run: SendRun, itemIndex: number, problem: string) {
	return inputError(run.ctx.getNode(), itemIndex, 'Phone Number', `not sent: this ${problem}`, 'Send fewer messages to this number, or raise the limits in Options if your account allows more.');
}

/**
 * After every item is checked and before the first send: reserves the sends in the durable store
 * (repeats and per-number limits across executions, decided in item order at the store's time)
 * and checks the spending cap. Items already sent in this run (Retry On Fail) are left alone.
 * Returns the refused items.
 */
export async function reserveSends(run: SendRun, plans: SendPlan[]): Promise<Map<number, unknown>> {
	const { ctx, records, meter } = run;
	const fresh = plans.filter((plan) => !plan.earlier);
	let decisions: Map<number, SendDecision>;
	try {
		decisions = await records.reserve(fresh.map((plan) => ({ itemIndex: plan.itemIndex, phone: plan.phone, message: plan.message })));
	} catch (error) {
		throw recordsUnavailable(ctx.getNode(), 'SMS', error, run.repeatWindowMinutes);
	}
	const refused = new Map<number, unknown>();
	for (const plan of fresh) {
		const decision = decisions.get(plan.itemIndex);
		if (decision?.kind === 'limit') refused.set(plan.itemIndex, limitRefusal(run, plan.itemIndex, decision.problem));
	}
	const toSend = fresh.filter((plan) => decisions.get(plan.itemIndex)?.kind === 'send');
	if (meter.capYuan <= 0 || toSend.length === 0) return refused;
	const segments = toSend.reduce((sum, plan) => sum + (plan.size?.segments ?? 1), 0);
	const counted = lengthNote(toSend);
	const overCap = meter.overCap(
		roundYuan(toSend.reduce((sum, plan) => sum + costOf(plan), 0)),
		`${toSend.length} SMS, ${plural(segments, 'message segment')} at ${priceOf('smsSend')} yuan; ${counted}`,
	);
	if (overCap) {
		await records.release(records.holding()).catch((error: unknown) => {
			if (error instanceof RecordsFailure) overCap.description = `${overCap.description ?? ''} ${keptRecordsText(error, run.repeatWindowMinutes)}`.trim();
		});
		throw overCap;
	}
	ctx.addExecutionHints?.({ message: `Spending cap: ${plural(segments, 'message segment')} counted for ${toSend.length} SMS; ${counted}.`, location: 'outputPane' });
	return refused;
}
