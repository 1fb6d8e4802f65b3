import { priceOf, roundYuan } from '../../../../shared/money/spend';
import { smsCostYuan } from '../../../../shared/money/smsCost';
import { plural } from '../../../../shared/output/plural';
import { limitRefusal, recordsUnavailable, withKeptRecords } from '../../sendErrors';
import type { SendPlan, SendRun } from './sendRun';

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

/**
 * After every item is checked and before the first send: reserves the sends in the durable store
 * (repeats and per-number limits across executions, decided in item order at the store's time),
 * keeps each item's decision in the run for its send, and checks the spending cap. Items already
 * sent in this run (Retry On Fail) are left alone. Returns the refused items.
 */
export async function reserveSends(run: SendRun, plans: Map<number, SendPlan>): Promise<Map<number, unknown>> {
	const { ctx, records } = run;
	const fresh = [...plans.values()].filter((plan) => !plan.earlier);
	try {
		const decisions = await records.reserve(fresh.map((plan) => ({ itemIndex: plan.itemIndex, phone: plan.phone, message: plan.message })));
		for (const [itemIndex, decision] of decisions) run.decisions.set(itemIndex, decision);
	} catch (error) {
		throw recordsUnavailable(ctx.getNode(), 'SMS', error, records.repeatWindowMinutes);
	}
	const refused = new Map<number, unknown>();
	for (const plan of fresh) {
		const decision = run.decisions.get(plan.itemIndex);
		if (decision?.kind === 'limit') refused.set(plan.itemIndex, limitRefusal(ctx.getNode(), plan.itemIndex, decision.problem));
	}
	await checkCap(run, fresh.filter((plan) => run.decisions.get(plan.itemIndex)?.kind === 'send'));
	return refused;
}

/**
 * The spending cap and budgets over the sends about to be made, reserved at once in the store: above
 * a limit (or with the store failing), every reservation is released and the node stops.
 */
async function checkCap(run: SendRun, toSend: SendPlan[]): Promise<void> {
	const { ctx, records, meter } = run;
	if (!meter.limited || toSend.length === 0) return;
	const segments = toSend.reduce((sum, plan) => sum + (plan.size?.segments ?? 1), 0);
	const counted = lengthNote(toSend);
	const overCap = await meter.reserveEstimate(
		roundYuan(toSend.reduce((sum, plan) => sum + smsCostYuan(plan.size), 0)),
		`${toSend.length} SMS, ${plural(segments, 'message segment')} at ${priceOf('smsSend')} yuan; ${counted}`,
		{ whole: true, calls: toSend.length },
	);
	if (overCap) {
		await records.release(records.holding()).catch((failure: unknown) => withKeptRecords(overCap, failure, records.repeatWindowMinutes));
		throw overCap;
	}
	ctx.addExecutionHints?.({ message: `Spending cap: ${plural(segments, 'message segment')} counted for ${toSend.length} SMS; ${counted}.`, location: 'outputPane' });
}
