import { NodeOperationError, type IDataObject, type IExecuteFunctions, type INode, type INodeExecutionData, type INodeProperties, type INodePropertyOptions } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import { asNodeError } from '../../../shared/errors/failures';
import { presentTask } from '../../../shared/output/smsObjects';
import { DeliveryLog } from './reference';
import { planSend } from './send/plan';
import { deliveryOutcome, DeliveryPoller, MIN_POLL_INTERVAL_SECONDS, readPolling, type Polling } from './send/poll';
import { reserveSends } from './send/records';
import { startSendRun, type SendOutcome } from './send/run';
import { runSends } from './send/outcome';
import { sendOnce } from './send/send';
import type { BillKind } from '../../../shared/money/bill';
import { isFinalStatus } from '../../../shared/store/sendsByTask';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'sms';

export { deliveryOutcome };

const show = { resource: ['message'], operation: ['sendAndCheck'] };

/** This operation's entry in the Operation dropdown; message/index.ts lists the entries in the order people use them. */
export const option: INodePropertyOptions = {
	name: 'Send and Check Delivery',
	value: 'sendAndCheck',
	description: 'Send an SMS, then check its status until it is delivered, failed, or the wait times out',
	action: 'Send an SMS and check delivery',
};

export const description: INodeProperties[] = [
	{
		displayName: 'Poll Interval (Seconds)',
		name: 'pollIntervalSeconds',
		type: 'number',
		typeOptions: { minValue: MIN_POLL_INTERVAL_SECONDS },
		default: 5,
		description: 'How often to ask for the delivery status (a free query)',
		displayOptions: { show },
	},
	{
		displayName: 'Wait Timeout (Seconds)',
		name: 'waitTimeoutSeconds',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 120,
		description: 'How long to wait for a final status before outputting the outcome "sending" (not delivered yet, not failed)',
		displayOptions: { show },
	},
];

/** The refusal of the whole node as one item's own error, naming that item. */
function wholeNodeRefusal(node: INode, error: unknown, itemIndex: number): NodeOperationError {
	const description = (error as { description?: unknown }).description;
	return new NodeOperationError(node, error instanceof Error ? error.message : String(error), {
		description: typeof description === 'string' ? description : undefined,
		itemIndex,
	});
}

type Settled = { sent: SendOutcome; sentAt: number; polling: Polling } | { error: unknown };

/**
 * Sends every item first (at most once per item, like Send, within the limits), then follows all
 * the tasks together until each is final or its wait times out. For n8n instances that the
 * gateway's delivery reports cannot reach. Not n8n's human-in-the-loop "send and wait": nothing
 * waits for a reply.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const run = await startSendRun(this, client, callOptions(this));
	const deliveries = new DeliveryLog(this, client.accountKey);
	const settled = new Map<number, Settled>();
	const polling = new Map<number, Polling>();
	const keep = <T>(itemIndex: number, work: () => Promise<T>): Promise<T> =>
		work().catch((error: unknown) => {
			settled.set(itemIndex, { error });
			throw error;
		});
	return await deliveries.around(async () => await runSends(run, async () => {
		// Every send first: a later item does not wait for an earlier one's delivery.
		await runForEachItem(this, {
			concurrency: client.settings.limiter.maxConcurrent,
			plan: async (itemIndex) =>
				await keep(itemIndex, async () => {
					polling.set(itemIndex, readPolling(this, itemIndex));
					deliveries.readReference(itemIndex);
					return await planSend(run, itemIndex);
				}),
			beforeCalls: async (plans) => {
				const refused = await reserveSends(run, [...plans.values()]).catch((error: unknown) => {
					// A refusal of the whole node (spending cap, send records) is every waiting item's error.
					for (const itemIndex of plans.keys()) settled.set(itemIndex, { error: wholeNodeRefusal(this.getNode(), error, itemIndex) });
					return Promise.reject(error);
				});
				for (const [itemIndex, error] of refused) settled.set(itemIndex, { error });
				return refused;
			},
			execute: async (plan) =>
				await keep(plan.itemIndex, async () => {
					const sent = deliveries.sent(plan.itemIndex, await sendOnce(run, plan));
					settled.set(plan.itemIndex, { sent, sentAt: Date.now(), polling: polling.get(plan.itemIndex) as Polling });
					return sent;
				}),
			output: (sent) => ({ ...sent }) as IDataObject,
		});
		// Then every task together; the items that failed above fail the same way here.
		await deliveries.saved();
		const poller = new DeliveryPoller(run);
		const continueOnFail = this.continueOnFail();
		const finals: Array<{ taskId: string; status: number }> = [];
		const outcomes = await runForEachItem(this, {
			concurrency: this.getInputData().length,
			plan: (itemIndex) => {
				const item = settled.get(itemIndex);
				if (!item) throw new Error(`Item ${itemIndex + 1} was not sent: the batch stopped before it`);
				if ('error' in item) throw item.error;
				return item;
			},
			execute: async ({ sent, sentAt, polling: wait }, itemIndex) => {
				if (sent.taskId === null) return { sent, task: undefined };
				try {
					const task = await poller.follow(itemIndex, sent.taskId, sentAt, wait);
					if (task && isFinalStatus(task.status)) finals.push({ taskId: sent.taskId, status: task.status });
					return { sent, task };
				} catch (error) {
					if (!continueOnFail) poller.stop();
					throw asNodeError(this.getNode(), error, itemIndex);
				}
			},
			output: ({ sent, task }, _plan, itemIndex) =>
				({
					...sent,
					...deliveries.outputOf(itemIndex),
					outcome: task ? deliveryOutcome(task.status) : sent.skippedAsRepeat ? 'skippedAsRepeat' : 'unknown',
					...(task ? { task: presentTask(task) } : {}),
				}) as IDataObject,
		});
		await deliveries.markFinal(finals);
		return outcomes;
	}));
}
