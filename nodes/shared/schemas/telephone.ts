import { z } from 'zod/v4';

import { looseNumber, looseString, record } from './envelope';

const text = looseString.nullable().optional();

/** Telephone identification (spec 2.6). Values of `iszhapian` other than 1 are not shown, so any number passes. */
export const telephoneIdentitySchema = record({
	iszhapian: looseNumber.nullable().optional(),
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
