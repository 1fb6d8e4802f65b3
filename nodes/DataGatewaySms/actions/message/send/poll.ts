import type { IExecuteFunctions } from 'n8n-workflow';

import { asNodeError, GatewayFailure, inputError } from '../../../../shared/errors/failures';
import { smsTaskSchema, type SmsTask } from '../../../../shared/gateway/schemas/sms';
import { abortableSleep } from '../../../../shared/limits/abortableSleep';
import { SMS_TASK_STATUS, SMS_TASK_STATUS_LABELS } from '../../../../shared/gateway/catalog';
import type { Polling, SendRun } from './sendRun';

export type { Polling };

export const MIN_POLL_INTERVAL_SECONDS = 0.1;

/** The outcome of a task's last status: delivered, failed, sending (the wait ran out), or unknown for a status the gateway does not name. */
export function deliveryOutcome(status: unknown): string {
	return SMS_TASK_STATUS_LABELS[String(status)] ?? 'unknown';
}

function readSeconds(ctx: IExecuteFunctions, itemIndex: number, name: string, label: string, minimum: number, fallback: number): number {
	const value = Number(ctx.getNodeParameter(name, itemIndex, fallback));
	if (!Number.isFinite(value) || value < minimum) {
		throw inputError(ctx.getNode(), itemIndex, label, `"${value}" is not a number of at least ${minimum}`, `Enter a number of seconds, e.g. ${fallback}.`);
	}
	return value * 1000;
}

export function readPolling(ctx: IExecuteFunctions, itemIndex: number): Polling {
	return {
		intervalMs: readSeconds(ctx, itemIndex, 'pollIntervalSeconds', 'Poll Interval (Seconds)', MIN_POLL_INTERVAL_SECONDS, 5),
		timeoutMs: readSeconds(ctx, itemIndex, 'waitTimeoutSeconds', 'Wait Timeout (Seconds)', 1, 120),
	};
}

/**
 * Follows the tasks of one node run after all of them were sent: each task is asked once per
 * interval (a free query, through the credential's limiter like every call), counted from its
 * send, until its status is final or its wait is over. `stop` ends every wait at once, when one
 * item's failure ends the node.
 */
export class DeliveryPoller {
	private stopNow!: () => void;
	private readonly stopped = new Promise<'stopped'>((resolve) => {
		this.stopNow = () => resolve('stopped');
	});
	private isStopped = false;

	constructor(private readonly run: SendRun) {}

	stop(): void {
		this.isStopped = true;
		this.stopNow();
	}

	/** Waits until `at` (epoch ms); false when the poller was stopped meanwhile. */
	private async waitUntil(at: number): Promise<boolean> {
		if (this.isStopped) return false;
		const waited = await Promise.race([abortableSleep(at - Date.now(), this.run.options.signal), this.stopped]);
		return waited !== 'stopped';
	}

	/** The task's last status; undefined only when the poller was stopped before the first answer. */
	async follow(itemIndex: number, taskId: string, sentAt: number, polling: Polling): Promise<SmsTask | undefined> {
		const { intervalMs, timeoutMs } = polling;
		const deadline = sentAt + timeoutMs;
		let next = sentAt + Math.min(intervalMs, timeoutMs);
		let task: SmsTask | undefined;
		for (;;) {
			if (!(await this.waitUntil(next))) return task;
			task = await this.status(itemIndex, taskId);
			if (task.status !== SMS_TASK_STATUS.sending || Date.now() + intervalMs > deadline) return task;
			next = Math.max(next + intervalMs, Date.now());
		}
	}

	private async status(itemIndex: number, taskId: string): Promise<SmsTask> {
		try {
			return (await this.run.client.call('smsStatus', { id: taskId }, smsTaskSchema, this.run.options)).data;
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
			throw asNodeError(this.run.ctx.getNode(), withTaskId, itemIndex);
		}
	}
}
