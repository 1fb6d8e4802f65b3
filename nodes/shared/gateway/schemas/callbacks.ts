import { z } from 'zod/v4';

import { looseInteger, record } from './envelope';
import { signatureSchema, smsTaskSchema, templateSchema } from './sms';

/**
 * Callback bodies (docs/gateway-api.md#callbacks). Each needs the identity of its event (id and status); the rest
 * is kept tolerant, as the gateway's document only lists the fields. Templates arrive under `sign`.
 */
export const reportCallbackSchema = record({ action: z.literal('report'), sms: smsTaskSchema });
export const signatureCallbackSchema = record({
	action: z.literal('sign'),
	sign: signatureSchema.extend({ status: looseInteger }),
});
export const templateCallbackSchema = record({
	action: z.literal('template'),
	sign: templateSchema.extend({ status: looseInteger }),
});

export const callbackSchemas = {
	report: reportCallbackSchema,
	sign: signatureCallbackSchema,
	template: templateCallbackSchema,
} as const;
