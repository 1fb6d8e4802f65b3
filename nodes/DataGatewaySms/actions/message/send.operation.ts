import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import { DeliveryLog, referenceFields } from './reference';
import { sendFields } from './send/fields';
import { planSend } from './send/plan';
import { reserveSends } from './send/records';
import { startSendRun } from './send/run';
import { runSends } from './send/outcome';
import { sendOnce } from './send/send';
import type { BillKind } from '../../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'sms';

/** This operation's entry in the Operation dropdown; message/index.ts lists the entries in the order people use them. */
export const option: INodePropertyOptions = {
	name: 'Send',
	value: 'send',
	description: 'Send an SMS with an approved signature and template (paid per delivered message)',
	action: 'Send an SMS',
};

export const description: INodeProperties[] = [...sendFields(['send', 'sendAndCheck']), ...referenceFields(['send', 'sendAndCheck'])];

/** Sends one SMS per item and run, never twice under Retry On Fail or a retried execution. Outputs the task ID. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const run = await startSendRun(this, client, callOptions(this));
	const deliveries = new DeliveryLog(this, client.accountKey);
	return await deliveries.around(async () => await runSends(run, async () => await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: async (itemIndex) => {
			deliveries.readReference(itemIndex);
			return await planSend(run, itemIndex);
		},
		beforeCalls: async (plans) => await reserveSends(run, [...plans.values()]),
		execute: async (plan) => deliveries.sent(plan.itemIndex, await sendOnce(run, plan)),
		output: (outcome, _plan, itemIndex) => ({ ...outcome, ...deliveries.outputOf(itemIndex) }) as IDataObject,
	})));
}
