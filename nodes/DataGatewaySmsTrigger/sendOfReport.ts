import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { isFinalStatus, markReported, openDeliveryStore, readSends, type SendRecord } from '../shared/store/sendsByTask';

/** The gateway's task IDs are short; a longer one cannot be a send of ours and is not written to the store. */
const MAX_TASK_ID_CHARS = 128;

/**
 * The fields a delivery report gains when the store knows its send and the send had a Reference.
 * Without one the report stays as it was: saved workflows see no new fields until they set one.
 */
function sendFields(record: SendRecord | undefined): IDataObject {
	if (!record || record.sentAt === undefined || typeof record.reference !== 'string') return {};
	return {
		reference: record.reference,
		sendWorkflowId: record.workflowId ?? null,
		sendExecutionId: record.executionId ?? null,
		sentAt: new Date(record.sentAt).toISOString(),
	};
}

export interface SendOfReport {
	/** What the report item gains: empty when the store does not know the send. */
	fields: IDataObject;
	/** Check Pending Deliveries already output this report: the trigger does not start it again. */
	caughtUp: boolean;
}

/**
 * The send a delivery report belongs to, from the store Send recorded it in: its reference, workflow
 * and execution. The report names no account, so it is the send of the one account that has its
 * task ID; when several have, none. A final report reaching the Production URL is also marked received, so Check Pending
 * Deliveries does not list it; one caught on the Test URL is not, as the active workflow never saw it.
 * The report starts the workflow even when the store cannot be used; the log says why it lacks its reference.
 */
export async function sendOfReport(ctx: IWebhookFunctions, task: { id: string; status: unknown }): Promise<SendOfReport> {
	if (task.id.length === 0 || task.id.length > MAX_TASK_ID_CHARS) return { fields: {}, caughtUp: false };
	try {
		const store = await openDeliveryStore(ctx);
		if (ctx.getMode() === 'manual' || !isFinalStatus(task.status)) return { fields: sendFields((await readSends(store, [task.id])).get(task.id)), caughtUp: false };
		const marked = (await markReported(store, [{ taskId: task.id, status: task.status }], 'trigger')).get(task.id);
		if (marked?.ambiguous) {
			// A report names no account; another account's reference must not land on it. Check Pending Deliveries of each account still lists its send.
			ctx.logger.warn('Data Gateway SMS Trigger: several accounts sent a message with the task ID of this delivery report; it starts the workflow without a reference', {
				workflowId: ctx.getWorkflow().id,
				node: ctx.getNode().name,
			});
		}
		const before = marked?.before;
		return { fields: sendFields(before), caughtUp: before?.reportedBy === 'checkPending' };
	} catch (error) {
		ctx.logger.warn(`Data Gateway SMS Trigger: could not look up the send of a delivery report in the store: ${error instanceof Error ? error.message : String(error)}`, {
			workflowId: ctx.getWorkflow().id,
			node: ctx.getNode().name,
		});
		return { fields: {}, caughtUp: false };
	}
}
