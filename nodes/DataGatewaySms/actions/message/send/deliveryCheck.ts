import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { runForEachItem } from '../../../../shared/n8n/batch';
import { asNodeError } from '../../../../shared/errors/failures';
import type { SmsTask } from '../../../../shared/gateway/schemas/sms';
import { presentTask } from '../../../../shared/output/smsObjects';
import { isFinalStatus } from '../../../../shared/store/sendsByTask';
import { wholeNodeRefusal } from '../../../../shared/n8n/errorItems';
import { refuseOptedOutThenReserve } from './guards';
import { planSend } from './plan';
import { deliveryOutcome, DeliveryPoller, readPolling } from './poll';
import { notSentOutcome, outcomeFields } from './plainWords';
import { reserveSends } from './reserve';
import { sendItem } from './send';
import type { Polling, SendOutcome, SendPlan, SendRun } from './sendRun';

/**
 * Send and Check Delivery in two passes: every item is sent first (plan, reserve and send, as Send
 * does, each item's end kept here), then every task is followed together, and the items that
 * failed in the first pass fail the same way in the second.
 */

type SettledSend = { sent: SendOutcome; sentAt: number; polling: Polling } | { error: unknown };

/** Each item's end in the first pass: sent (with when, and how to follow it), or its error. */
export class SettledSends {
	private readonly items = new Map<number, SettledSend>();

	constructor(private readonly run: SendRun) {}

	/** The plan step: the item's polling, then what Send reads and checks. */
	async plan(itemIndex: number): Promise<SendPlan> {
		return await this.keep(itemIndex, async () => {
			const polling = readPolling(this.run.ctx, itemIndex);
			return { ...(await planSend(this.run, itemIndex)), polling };
		});
	}

	/** The records step (after the opt-out list): a refusal of the whole node (opt-out list, spending cap, send records) is every waiting item's error. */
	async reserve(plans: Map<number, SendPlan>): Promise<Map<number, unknown>> {
		const node = this.run.ctx.getNode();
		const refused = await refuseOptedOutThenReserve(this.run, plans, async (rest) => await reserveSends(this.run, rest)).catch((error: unknown) => {
			for (const itemIndex of plans.keys()) this.items.set(itemIndex, { error: wholeNodeRefusal(node, error, itemIndex) });
			return Promise.reject(error);
		});
		for (const [itemIndex, error] of refused) this.items.set(itemIndex, { error });
		return refused;
	}

	/** The send step, as Send's. */
	async send(plan: SendPlan): Promise<SendOutcome> {
		return await this.keep(plan.itemIndex, async () => {
			const sent = await sendItem(this.run, plan);
			this.items.set(plan.itemIndex, { sent, sentAt: Date.now(), polling: plan.polling as Polling });
			return sent;
		});
	}

	/** The item's send for the second pass; its error again when it failed. */
	of(itemIndex: number): { sent: SendOutcome; sentAt: number; polling: Polling } {
		const item = this.items.get(itemIndex);
		if (!item) throw new Error(`Item ${itemIndex + 1} was not sent: the batch stopped before it`);
		if ('error' in item) throw item.error;
		return item;
	}

	private async keep<T>(itemIndex: number, work: () => Promise<T>): Promise<T> {
		return await work().catch((error: unknown) => {
			this.items.set(itemIndex, { error });
			throw error;
		});
	}
}

/** The second pass: follows every task together until it is final or its wait is over; marks the finals seen for Check Pending. */
export async function checkDeliveries(run: SendRun, settled: SettledSends): Promise<INodeExecutionData[]> {
	const { ctx, deliveries } = run;
	await deliveries.saved();
	const poller = new DeliveryPoller(run);
	const continueOnFail = ctx.continueOnFail();
	const finals: Array<{ taskId: string; status: number }> = [];
	const follow = async ({ sent, sentAt, polling }: ReturnType<SettledSends['of']>, itemIndex: number) => {
		if (sent.taskId === null) return { sent, task: undefined };
		try {
			const task = await poller.follow(itemIndex, sent.taskId, sentAt, polling);
			if (task && isFinalStatus(task.status)) finals.push({ taskId: sent.taskId, status: task.status });
			return { sent, task };
		} catch (error) {
			if (!continueOnFail) poller.stop();
			throw asNodeError(ctx.getNode(), error, itemIndex);
		}
	};
	const outcomes = await runForEachItem(ctx, {
		concurrency: ctx.getInputData().length,
		plan: (itemIndex) => settled.of(itemIndex),
		execute: follow,
		output: ({ sent, task }, _plan, itemIndex) => presentChecked(run, sent, task, itemIndex),
	});
	await deliveries.markFinal(finals);
	return outcomes;
}

function presentChecked(run: SendRun, sent: SendOutcome, task: SmsTask | undefined, itemIndex: number): IDataObject {
	return {
		...outcomeFields(run.node, sent, run.records.repeatWindowMinutes),
		...run.deliveries.outputOf(itemIndex),
		outcome: task ? deliveryOutcome(task.status) : (notSentOutcome(run.ctx, sent) ?? 'unknown'),
		...(task ? { task: presentTask(task) } : {}),
	} as IDataObject;
}
