import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/batch';
import { callOptions, gatewayClient } from '../../../shared/client';
import { SmsSendGuard } from '../../../shared/smsGuard';
import { planSend, sendFields, sendOnce, smsLimits } from './sendCore';

export const description: INodeProperties[] = sendFields(['send', 'sendAndWait']);

/** Sends one SMS per item, never twice for the same item in one execution. Outputs the task ID. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const options = callOptions(this);
	const guard = new SmsSendGuard(this.getExecutionId?.() ?? '', smsLimits(this));
	const plannedByPhone = new Map<string, number>();
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => planSend(this, itemIndex, client, guard, plannedByPhone),
		execute: async (plan) => await sendOnce(this, client, guard, plan, options),
		output: (outcome) => outcome as unknown as IDataObject,
	});
}
