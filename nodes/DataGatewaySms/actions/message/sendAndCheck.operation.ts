import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/batch';
import { callOptions, gatewayClient } from '../../../shared/client';
import { asNodeError, GatewayFailure, inputError } from '../../../shared/errors';
import { smsTaskSchema, type SmsTask } from '../../../shared/schemas/sms';
import { abortableSleep } from '../../../shared/sleep';
import { SMS_TASK_STATUS, SMS_TASK_STATUS_LABELS } from '../../../shared/spec';
import { presentTask } from './getStatus.operation';
import { planSend, reserveSends, runSends, sendOnce, startSendRun, type SendRun } from './sendCore';

const show = { resource: ['message'], operation: ['sendAndCheck'] };
const MIN_POLL_INTERVAL_SECONDS = 0.1;
const FINAL_OUTCOMES: Record<string, string> = {
	[String(SMS_TASK_STATUS.delivered)]: SMS_TASK_STATUS_LABELS[String(SMS_TASK_STATUS.delivered)],
	[String(SMS_TASK_STATUS.failed)]: SMS_TASK_STATUS_LABELS[String(SMS_TASK_STATUS.failed)],
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
		description: 'How long to wait for a final status before outputting the outcome "unknown" (still sending)',
		displayOptions: { show },
	},
];

function readSeconds(ctx: IExecuteFunctions, itemIndex: number, name: string, label: string, minimum: number, fallback: number): number {
	const value = Number(ctx.getNodeParameter(name, itemIndex, fallback));
	if (!Number.isFinite(value) || value < minimum) {
		throw inputError(ctx.getNode(), itemIndex, label, `"${value}" is not a number of at least ${minimum}`, `Enter a number of seconds, e.g. ${fallback}.`);
	}
	return value * 1000;
}

/** Asks for the status until it is final or the wait is over; each ask is a fresh, free query. */
async function pollUntilFinal(run: SendRun, itemIndex: number, taskId: string, intervalMs: number, timeoutMs: number): Promise<SmsTask> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		let task: SmsTask;
		try {
			task = (await run.client.call('smsStatus', { id: taskId }, smsTaskSchema, run.options)).data;
		} catch (error) {
			// The message went out: the error must carry its task ID, or the user could not follow it up.
			const withTaskId =
				error instanceof GatewayFailure
					? new GatewayFailure({
							kind: error.kind,
							operation: error.operation,
							gatewayCode: error.gatewayCode,
							httpStatus: error.httpStatus,
							message: `the SMS was sent as task ${taskId}, but its status could not be read: ${error.message}`,
							hint: `It was not sent again. Check it later with Message > Get Status and task ID ${taskId}, or wait for its delivery report.`,
						})
					: error;
			throw asNodeError(run.ctx.getNode(), withTaskId, itemIndex);
		}
		if (task.status !== SMS_TASK_STATUS.sending || Date.now() + intervalMs > deadline) return task;
		await abortableSleep(intervalMs, run.options.signal);
	}
}

/**
 * Sends (at most once per item, like Send), then polls the status until it is final or the wait
 * times out. For n8n instances that the gateway's delivery reports cannot reach. Not n8n's
 * human-in-the-loop "send and wait": nothing waits for a reply.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const run = startSendRun(this, client, callOptions(this));
	return await runSends(run, async () => await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: async (itemIndex) => ({
			intervalMs: readSeconds(this, itemIndex, 'pollIntervalSeconds', 'Poll Interval (Seconds)', MIN_POLL_INTERVAL_SECONDS, 5),
			timeoutMs: readSeconds(this, itemIndex, 'waitTimeoutSeconds', 'Wait Timeout (Seconds)', 1, 120),
			send: await planSend(run, itemIndex),
		}),
		beforeCalls: async (plans) => await reserveSends(run, [...plans.values()].map((plan) => plan.send)),
		execute: async (plan) => {
			const sent = await sendOnce(run, plan.send);
			if (sent.taskId === null) return { sent, task: undefined };
			const task = await pollUntilFinal(run, plan.send.itemIndex, sent.taskId, plan.intervalMs, plan.timeoutMs);
			return { sent, task };
		},
		output: ({ sent, task }) =>
			({
				...sent,
				// delivered or failed; unknown when the wait ran out (still sending) or the status is not one the spec names
				outcome: task ? (FINAL_OUTCOMES[String(task.status)] ?? 'unknown') : 'skippedAsRepeat',
				...(task ? { task: presentTask(task) } : {}),
			}) as IDataObject,
	}));
}
