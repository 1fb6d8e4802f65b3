import type { IDataObject } from 'n8n-workflow';

import { enterpriseDetailSchema, type EnterpriseDetail } from '../../../shared/gateway/schemas/enterprise';
import { emptyToNull } from '../../../shared/output/convert';
import { friendlyEnterprise } from '../../../shared/output/friendly';
import { lookupOperation } from '../../../shared/n8n/lookupOperation';
import type { ItemInput } from '../../../shared/n8n/parameters';
import { keywordField, keywordOf } from '../keywordField';
import { fingerprint } from '../../../shared/lookups/onlyNew';

/** `-` (and empty text) become null at every depth. */
function nullEmptyValues(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(nullEmptyValues);
	if (value && typeof value === 'object') {
		return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, nullEmptyValues(inner)]));
	}
	return emptyToNull(value);
}

/** One flat record: `data.data` lifted beside `sign`, one `address` and one `branches` key. */
export function simplifyEnterprise(detail: EnterpriseDetail): IDataObject {
	const { address, addresses, branches, brances, ...fields } = detail.data;
	return nullEmptyValues({
		...fields,
		address: address ?? addresses ?? null,
		branches: branches ?? brances ?? [],
		sign: detail.sign ?? null,
	}) as IDataObject;
}

/** The item's request: the company's keyword, checked before anything is paid. */
export function registrationRequest(item: ItemInput) {
	return { keyword: keywordOf(item, 'Enter the full company name, registration number or unified social credit code.') };
}

/** Paid (0.35 yuan, billed only when the gateway answers code 0): asked once per keyword in an execution. */
export const { description, execute, bill } = lookupOperation({
	operation: 'enterpriseDetail',
	show: { resource: ['registration'], operation: ['get'] },
	fields: [keywordField("The company's full registered name, its registration number, or its unified social credit code")],
	request: registrationRequest,
	schema: enterpriseDetailSchema,
	simplified: { v1: simplifyEnterprise, friendly: friendlyEnterprise },
	news: {
		kind: 'changed',
		option: {
			displayName: 'Only When Changed',
			name: 'onlyWhenChanged',
			description: 'Whether to output a company only when its record differs from the last one this node output for it (for scheduled checks)',
		},
		// The check date says when the gateway looked, and the signature's meaning is not shown: neither is a change of the company.
		fingerprints: (detail) => {
			const record: IDataObject = { ...(detail.data as IDataObject) };
			delete record.check_date;
			return [fingerprint(record)];
		},
		bill: { checked: ['company', 'companies'], withNews: 'changed' },
	},
});
