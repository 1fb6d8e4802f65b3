import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { ItemParameters } from '../../../shared/n8n/parameters';
import { checkKeyword } from '../../../shared/checks/keyword';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import { countedCall } from '../../../shared/money/bill';
import { simplifyProperties, usesFriendlyNames } from '../../../shared/n8n/description';
import { inputError } from '../../../shared/errors/failures';
import { enterpriseDetailSchema, type EnterpriseDetail } from '../../../shared/gateway/schemas/enterprise';
import { emptyToNull } from '../../../shared/output/convert';
import { friendlyEnterprise } from '../../../shared/output/friendly';
import type { BillKind } from '../../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'enterpriseDetail';

const showFor = { resource: ['registration'], operation: ['get'] };

export const description: INodeProperties[] = [
	{
		displayName: 'Keyword',
		name: 'keyword',
		type: 'string',
		required: true,
		default: '',
		placeholder: '北京示例科技有限公司',
		description: "The company's full registered name, its registration number, or its unified social credit code",
		displayOptions: { show: showFor },
	},
	...simplifyProperties(showFor),
];

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

/** Paid (0.35 yuan, billed only when the gateway answers code 0): asked once per keyword in an execution. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const parameters = new ItemParameters(this);
	const options = callOptions(this);
	const friendly = usesFriendlyNames(this);
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => {
			const keyword = checkKeyword(parameters.get('keyword', itemIndex, '') as string);
			if (!keyword.ok) {
				throw inputError(this.getNode(), itemIndex, 'Keyword', keyword.value, 'Enter the full company name, registration number or unified social credit code.');
			}
			return { keyword: keyword.value, simplify: parameters.get('simplify', itemIndex, friendly) as boolean };
		},
		shareKey: (plan) => client.questionKey('enterpriseDetail', { keyword: plan.keyword }),
		paid: { operation: 'enterpriseDetail', client },
		execute: async (plan) => await countedCall(this, async () => (await client.call('enterpriseDetail', { keyword: plan.keyword }, enterpriseDetailSchema, options)).data),
		output: (detail, plan) => (plan.simplify ? (friendly ? friendlyEnterprise(detail) : simplifyEnterprise(detail)) : (detail as IDataObject)),
	});
}
