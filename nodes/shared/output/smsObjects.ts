import type { IDataObject } from 'n8n-workflow';

import { REVIEW_STATUS_LABELS, SMS_TASK_STATUS_LABELS } from '../gateway/catalog';
import type { SmsTask } from '../gateway/schemas/sms';
import { withIsoTimes } from './convert';

/**
 * One shape for an SMS task wherever it comes from (status query, Send and Check, report callback):
 * a readable status and `receiveDate` spelled one way (the status query spells it `reveiveDate`).
 */
export function presentTask(task: SmsTask): IDataObject {
	const { reveiveDate, receiveDate, ...rest } = task;
	const shaped = {
		...rest,
		receiveDate: receiveDate ?? reveiveDate ?? null,
		statusLabel: SMS_TASK_STATUS_LABELS[String(task.status)] ?? 'unknown',
	};
	return withIsoTimes(shaped, ['sendDate', 'receiveDate']) as IDataObject;
}

/** A signature or template (answer or review callback): readable status beside the code, ISO times beside the originals. */
export function presentReviewed(object: Record<string, unknown>): IDataObject {
	const shaped: Record<string, unknown> = { ...object };
	if (object.status !== undefined && object.status !== null) shaped.statusLabel = REVIEW_STATUS_LABELS[String(object.status)] ?? 'unknown';
	return withIsoTimes(shaped, ['create_time', 'update_time']) as IDataObject;
}
