import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { checkDeliveries, SettledSends } from './send/deliveryCheck';
import { finishSends, settle } from './send/finish';
import { deliveryOutcome, MIN_POLL_INTERVAL_SECONDS } from './send/poll';
import { openSendRun } from './send/sendRun';
import type { BillKind } from '../../../shared/money/bill';

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

/**
 * Sends every item first (at most once per item, like Send, within the limits), then follows all
 * the tasks together until each is final or its wait times out. For n8n instances that the
 * gateway's delivery reports cannot reach. Not n8n's human-in-the-loop "send and wait": nothing
 * waits for a reply.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const run = await openSendRun(this);
	const settled = new SettledSends(run);
	// Every send first: a later item does not wait for an earlier one's delivery.
	const sends = runForEachItem(this, {
		concurrency: run.client.settings.limiter.maxConcurrent,
		plan: async (itemIndex) => await settled.plan(itemIndex),
		beforeCalls: async (plans) => await settled.reserve(plans),
		execute: async (plan) => await settled.send(plan),
		output: (sent) => ({ ...sent }) as IDataObject,
	});
	return await finishSends(run, await settle(sends.then(async () => await checkDeliveries(run, settled))));
}
