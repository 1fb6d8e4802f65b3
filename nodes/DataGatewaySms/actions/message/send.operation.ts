import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/batch';
import { callOptions, gatewayClient } from '../../../shared/client';
import { planSend, sendFields, sendOnce, startSendRun } from './sendCore';

export const description: INodeProperties[] = sendFields(['send', 'sendAndWait']);

/** Sends one SMS per item, never twice for the same item in one execution. Outputs the task ID. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const run = startSendRun(this, client, callOptions(this));
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: async (itemIndex) => await planSend(run, itemIndex),
		execute: async (plan) => await sendOnce(run, plan),
		output: (outcome) => ({ ...outcome }) as IDataObject,
	});
}
