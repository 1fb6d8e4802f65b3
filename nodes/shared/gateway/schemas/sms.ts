import { z } from 'zod/v4';

import { looseInteger, looseString, record } from './envelope';

const text = looseString.nullable().optional();

/** Answer of /sms/send. */
export const sendResultSchema = record({ id: looseString });

/**
 * An SMS task, as the status query (`reveiveDate`) or the report callback (`receiveDate`) gives it;
 * `phone` is a number in the sample and is handed over as text.
 */
export const smsTaskSchema = record({
	id: looseString,
	phone: text,
	content: text,
	sendDate: text,
	reveiveDate: text,
	receiveDate: text,
	status: looseInteger,
	message: text,
});

/** A signature; status and error come only from queries and callbacks. */
export const signatureSchema = record({
	id: looseString,
	user_id: looseString.nullable().optional(),
	name: text,
	remark: text,
	status: looseInteger.nullable().optional(),
	error: text,
	create_time: text,
	update_time: text,
});

export const templateSchema = signatureSchema.extend({ content: text });

/** Deletes answer without data. */
export const noDataSchema = z.unknown();

export type SmsTask = z.output<typeof smsTaskSchema>;
export type Signature = z.output<typeof signatureSchema>;
export type Template = z.output<typeof templateSchema>;
