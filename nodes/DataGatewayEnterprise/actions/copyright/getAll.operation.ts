import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/batch';
import { ItemParameters } from '../../../shared/parameters';
import { checkKeyword } from '../../../shared/checks/keyword';
import { callOptions, gatewayClient } from '../../../shared/client';
import { simplifyProperty } from '../../../shared/description';
import { inputError } from '../../../shared/errors';
import { copyrightPageSchema, type CopyrightPage } from '../../../shared/schemas/enterprise';
import { emptyToNull, withIsoTimes } from '../../../shared/simplify';
import { COPYRIGHT_DEFAULT_PAGE_SIZE } from '../../../shared/spec';
import type { GatewayClient } from '../../../shared/transport';

const showFor = { resource: ['copyright'], operation: ['getAll'] };

export const description: INodeProperties[] = [
	{
		displayName: 'Keyword',
		name: 'keyword',
		type: 'string',
		required: true,
		default: '',
		placeholder: '北京示例科技有限公司',
		description: 'Company name or key number whose software copyright registrations to list',
		displayOptions: { show: showFor },
	},
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
		hint: 'Every page fetched is a paid call',
		displayOptions: { show: showFor },
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { ...showFor, returnAll: [false] } },
	},
	{ ...simplifyProperty, displayOptions: { show: showFor } },
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: showFor },
		options: [
			{
				displayName: 'Page Size',
				name: 'pageSize',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: COPYRIGHT_DEFAULT_PAGE_SIZE,
				description:
					"Records per paid call. The gateway's default is 10 and its maximum is not documented, so raise it only if your account allows larger pages.",
			},
		],
	},
];

type CopyrightRecord = CopyrightPage['data'][number];

/**
 * Reads pages until the limit, the total, or a short page; each page is one paid call. A missing
 * total is tolerated: the first short (or empty) page ends the listing.
 */
export async function readCopyrightPages(
	fetchPage: (pageIndex: number) => Promise<CopyrightPage>,
	query: { limit: number; pageSize: number },
): Promise<CopyrightRecord[]> {
	const records: CopyrightRecord[] = [];
	let previousPage = '';
	for (let pageIndex = 1; records.length < query.limit; pageIndex++) {
		const page = await fetchPage(pageIndex);
		// Each page is paid: a gateway that ignores pageIndex would otherwise be asked forever.
		const thisPage = JSON.stringify(page.data);
		if (pageIndex > 1 && thisPage === previousPage) break;
		previousPage = thisPage;
		records.push(...page.data);
		const total = page.totalRecords ?? Number.POSITIVE_INFINITY;
		if (page.data.length < query.pageSize || records.length >= total) break;
	}
	return records.slice(0, query.limit);
}

async function fetchCopyrights(
	client: GatewayClient,
	query: { keyword: string; limit: number; pageSize: number },
	options: ReturnType<typeof callOptions>,
): Promise<CopyrightRecord[]> {
	const fetchPage = async (pageIndex: number) =>
		(await client.call('enterpriseCopyright', { keyword: query.keyword, pageIndex, pageSize: query.pageSize }, copyrightPageSchema, options)).data;
	return await readCopyrightPages(fetchPage, query);
}

export function simplifyCopyright(record: CopyrightRecord): IDataObject {
	const timed = withIsoTimes(record, ['RegisterDate', 'PublishDate', 'FinishDate']) as IDataObject;
	return { ...timed, Category: emptyToNull(record.Category) as string | null };
}

/** Get Many over pageIndex / pageSize paging: one output item per copyright record. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const parameters = new ItemParameters(this);
	const options = callOptions(this);
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => {
			const keyword = checkKeyword(parameters.get('keyword', itemIndex, '') as string);
			if (!keyword.ok) {
				throw inputError(this.getNode(), itemIndex, 'Keyword', keyword.value, 'Enter a company name or key number.');
			}
			const returnAll = parameters.get('returnAll', itemIndex, false) as boolean;
			const limit = returnAll ? Number.POSITIVE_INFINITY : Number(parameters.get('limit', itemIndex, 50));
			if (!(limit >= 1)) throw inputError(this.getNode(), itemIndex, 'Limit', `${limit} is below 1`, 'Set Limit to 1 or more, or turn on Return All.');
			const pageSize = Number((parameters.get('options', itemIndex, {}) as IDataObject).pageSize ?? COPYRIGHT_DEFAULT_PAGE_SIZE);
			if (!Number.isInteger(pageSize) || pageSize < 1) {
				throw inputError(this.getNode(), itemIndex, 'Page Size', `${pageSize} is not a whole number of 1 or more`, 'Set Page Size to 10 or another positive whole number.');
			}
			return { keyword: keyword.value, limit, pageSize, simplify: parameters.get('simplify', itemIndex, false) as boolean };
		},
		shareKey: (plan) => `${client.questionKey('enterpriseCopyright', { keyword: plan.keyword, pageSize: plan.pageSize })}|limit=${plan.limit}`,
		shareAcrossExecution: true,
		execute: async (plan) => await fetchCopyrights(client, plan, options),
		output: (records, plan) => records.map((record) => (plan.simplify ? simplifyCopyright(record) : (record as IDataObject))),
	});
}
