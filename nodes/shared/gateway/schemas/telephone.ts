import { z } from 'zod/v4';

import { looseNumber, looseString, record } from './envelope';
import { unchangedWhen } from './fastParse';

const text = looseString.nullable().optional();

/** Values of `iszhapian` other than 1 are not shown: a number (also as text) is read as one, anything else is kept as sent. */
const flagValue = unchangedWhen(
	z.unknown().transform((value) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value)),
	(value) => typeof value !== 'string',
);

/** Telephone identification (docs/gateway-api.md#telephone-identity). */
export const telephoneIdentitySchema = record({
	iszhapian: flagValue.optional(),
	province: text,
	city: text,
	sp: text,
	phone: text,
	rpt_type: text,
	rpt_comment: text,
	rpt_cnt: looseNumber.nullable().optional(),
	hy: record({
		city: text,
		lng: text,
		lat: text,
		name: text,
		addr: text,
		tel: text,
	})
		.nullable()
		.optional(),
	hyname: text,
	countDesc: text,
});

export type TelephoneIdentity = z.output<typeof telephoneIdentitySchema>;
