import type { IExecuteFunctions, INodeExecutionData, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import { inputError } from '../../../shared/errors/failures';
import { smsTaskSchema } from '../../../shared/gateway/schemas/sms';
import { presentTask } from '../../../shared/output/smsObjects';

/** This operation's entry in the Operation dropdown; message/index.ts lists the entries in the order people use them. */
export const option: INodePropertyOptions = {
	name: 'Get Status',
	value: 'getStatus',
	description: 'Get the delivery status of a sent message by its task ID',
	action: 'Get the status of a message',
};

export const description: INodeProperties[] = [
	{
		displayName: 'Task ID',
		name: 'taskId',
		type: 'string',
		required: true,
		default: '',
		description: 'The task ID that Send returned',
		displayOptions: { show: { resource: ['message'], operation: ['getStatus'] } },
	},
];

export function readTaskId(ctx: IExecuteFunctions, itemIndex: number): string {
	const taskId = String(ctx.getNodeParameter('taskId', itemIndex, '')).trim();
	if (!taskId) throw inputError(ctx.getNode(), itemIndex, 'Task ID', 'is empty', 'Use the taskId that the Send operation output.');
	return taskId;
}

/** A free query; never shared between items or runs, because the status changes. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const options = callOptions(this);
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => readTaskId(this, itemIndex),
		execute: async (id) => (await client.call('smsStatus', { id }, smsTaskSchema, options)).data,
		output: (task) => presentTask(task),
	});
}
