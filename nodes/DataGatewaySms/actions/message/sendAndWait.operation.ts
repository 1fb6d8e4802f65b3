import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/batch';
import { callOptions, gatewayClient } from '../../../shared/client';
import { smsTaskSchema, type SmsTask } from '../../../shared/schemas/sms';
import { abortableSleep } from '../../../shared/sleep';
import { SmsSendGuard } from '../../../shared/smsGuard';
import { SMS_TASK_STATUS } from '../../../shared/spec';
import { presentTask } from './getStatus.operation';
import { planSend, sendOnce, smsLimits } from './sendCore';

const show = { resource: ['message'], operation: ['sendAndWait'] };

export const description: INodeProperties[] = [
	{
		displayName: 'Poll Interval (Seconds)',
		name: 'pollIntervalSeconds',
		type: 'number',
		typeOptions: { minValue: 0.1 },
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
		description: 'How long to wait for a final status before outputting "sending"',
		displayOptions: { show },
	},
];

const OUTCOMES: Record<number, string> = {
	[SMS_TASK_STATUS.delivered]: 'delivered',
	[SMS_TASK_STATUS.failed]: 'failed',
};

/**
 * Sends (at most once per item, like Send), then polls the status until it is final or the wait
 * times out. For n8n instances that the gateway's delivery reports cannot reach.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const options = callOptions(this);
	const guard = new SmsSendGuard(this.getExecutionId?.() ?? '', smsLimits(this));
	const plannedByPhone = new Map<string, number>();
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => ({
			send: planSend(this, itemIndex, client, guard, plannedByPhone),
			intervalMs: Math.max(100, Number(this.getNodeParameter('pollIntervalSeconds', itemIndex, 5)) * 1000),
			timeoutMs: Math.max(1000, Number(this.getNodeParameter('waitTimeoutSeconds', itemIndex, 120)) * 1000),
		}),
		execute: async (plan) => {
			const sent = await sendOnce(this, client, guard, plan.send, options);
			const deadline = Date.now() + plan.timeoutMs;
			let task: SmsTask | undefined;
			for (;;) {
				task = (await client.call('smsStatus', { id: sent.taskId }, smsTaskSchema, options)).data;
				if (task.status !== SMS_TASK_STATUS.sending || Date.now() + plan.intervalMs > deadline) break;
				await abortableSleep(plan.intervalMs, options.signal);
			}
			return { sent, task };
		},
		output: ({ sent, task }) => ({
			...sent,
			outcome: OUTCOMES[task.status] ?? 'sending',
			task: presentTask(task),
		}) as unknown as IDataObject,
	});
}
