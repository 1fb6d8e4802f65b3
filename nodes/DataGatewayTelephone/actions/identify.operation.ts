import type { IDataObject } from 'n8n-workflow';

import { checkTelephoneNumber } from '../../shared/checks/phone';
import { telephoneIdentitySchema, type TelephoneIdentity } from '../../shared/gateway/schemas/telephone';
import { flagFromIszhapian, htmlToText, toCount } from '../../shared/output/convert';
import { friendlyTelephone } from '../../shared/output/friendly';
import { lookupOperation } from '../../shared/n8n/lookupOperation';
import type { ItemInput } from '../../shared/n8n/parameters';
import { fingerprint } from '../../shared/lookups/onlyNew';

/** Smoothed output: a boolean flag, plain-text description and a numeric report count. */
export function simplifyIdentity(identity: TelephoneIdentity): IDataObject {
	return {
		...identity,
		isFlagged: flagFromIszhapian(identity.iszhapian),
		rpt_cnt: toCount(identity.rpt_cnt),
		countDescText: htmlToText(identity.countDesc),
	} as IDataObject;
}

/** The item's request: the number, normalised and checked. */
export function identifyRequest(item: ItemInput) {
	const phone = checkTelephoneNumber(item.read('phoneNumber', ''));
	if (!phone.ok) throw item.fail('Phone Number', phone.value, 'Enter a mobile number like 13800138000 or a landline with area code like 010-12345678.');
	return { tel: phone.value };
}

/** Free within the daily quota, so answers are shared across the whole execution like paid ones. */
export const { description, execute, bill } = lookupOperation({
	operation: 'telephoneIdentify',
	fields: [
		{
			displayName: 'Phone Number',
			name: 'phoneNumber',
			type: 'string',
			required: true,
			default: '',
			placeholder: '13800138000 or 010-12345678',
			description:
				'A mainland mobile number (11 digits), or a landline with its area code. Spaces, dashes and a +86 or 0086 prefix are removed (+86 10 12345678 becomes 01012345678).',
		},
	],
	request: identifyRequest,
	phoneOf: (params) => params.tel,
	schema: telephoneIdentitySchema,
	simplified: { v1: simplifyIdentity, friendly: (identity, given) => friendlyTelephone(identity, given === undefined ? undefined : { phoneAsGiven: given }) },
	// Joins by value need the number as the user wrote it (021-12345678), not only the normalised 02112345678.
	asGiven: (item) => String(item.read('phoneNumber', '')),
	shareAcrossExecution: true,
	dailyQuota: true,
	news: {
		kind: 'changed',
		option: {
			displayName: 'Only When Changed',
			name: 'onlyWhenChanged',
			description: 'Whether to output a number only when its identification differs from the last one this node output for it (for scheduled checks)',
		},
		fingerprints: (identity) => [fingerprint(identity)],
		bill: { checked: ['number', 'numbers'], withNews: 'changed' },
	},
});
