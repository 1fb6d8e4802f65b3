import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { ItemParameters } from '../../../shared/n8n/parameters';
import { checkKeyword } from '../../../shared/checks/keyword';
import { callOptions, gatewayClient, spendMeter } from '../../../shared/transport/clientForNode';
import { countedCall, countReused } from '../../../shared/money/bill';
import { simplifyProperties, usesFriendlyNames } from '../../../shared/n8n/description';
import { inputError, MisshapenAnswer } from '../../../shared/errors/failures';
import { copyrightPageSchema, type CopyrightPage } from '../../../shared/gateway/schemas/enterprise';
import { emptyToNull, withIsoTimes } from '../../../shared/output/convert';
import { friendlyCopyright } from '../../../shared/output/friendly';
import { COPYRIGHT_DEFAULT_PAGE_SIZE } from '../../../shared/gateway/catalog';
import { describeCalls, priceOf, roundYuan } from '../../../shared/money/spend';
import { executionMemory, runIdOf, sharedAnswer } from '../../../shared/state/executionMemory';
import type { GatewayClient } from '../../../shared/transport/gatewayClient';
import type { BillKind } from '../../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'enterpriseCopyright';

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
	...simplifyProperties(showFor),
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
 * Reads pages until the limit or the end; each page is one paid call. The end is `totalRecords`
 * when the gateway gives it (a gateway that caps the page size silently answers short pages that
 * are not the last), else the first short page; an empty page or a page equal to the one before
 * (a gateway that ignores pageIndex) ends it too.
 */
export async function readCopyrightPages(
	fetchPage: (pageIndex: number) => Promise<CopyrightPage>,
	query: { limit: number; pageSize: number },
): Promise<CopyrightRecord[]> {
	const records: CopyrightRecord[] = [];
	let previousPage = '';
	for (let pageIndex = 1; records.length < query.limit; pageIndex++) {
		const page = await fetchPage(pageIndex);
		if (page.data.length === 0) break;
		const thisPage = JSON.stringify(page.data);
		if (pageIndex > 1 && thisPage === previousPage) break;
		previousPage = thisPage;
		records.push(...page.data);
		const total = page.totalRecords;
		if (typeof total === 'number' && Number.isFinite(total)) {
			if (records.length >= total) break;
		} else if (page.data.length < query.pageSize) {
			break;
		}
	}
	return records.slice(0, query.limit);
}

type Listing = { keyword: string; limit: number; pageSize: number; simplify: boolean };
type Listed = {
	records: CopyrightRecord[];
	paidPages: number;
	pageOf: Map<CopyrightRecord, number>;
	paidPageIndexes: Set<number>;
	misshapen?: { answer: MisshapenAnswer; pageIndex: number };
};

/**
 * Pages are shared by the whole execution, keyed by (keyword, pageIndex, pageSize): two items with
 * the same keyword and different limits, a later run, or a Retry On Fail re-run after a failure
 * on page k reuse the pages already paid. The spending cap is checked before each new page.
 */
function pageReader(ctx: IExecuteFunctions, client: GatewayClient, options: ReturnType<typeof callOptions>) {
	const answers = executionMemory(ctx).answers;
	const meter = spendMeter(ctx, client);
	const runId = runIdOf(ctx);
	const price = priceOf('enterpriseCopyright');
	const pageKey = (listing: Listing, pageIndex: number) =>
		client.questionKey('enterpriseCopyright', { keyword: listing.keyword, pageIndex, pageSize: listing.pageSize });

	return {
		pageKey,
		/**
		 * Reads one listing for one item; `paidPages` counts the pages this item paid for, `pageOf` where
		 * each record came from. A page answered with code 0 whose data does not fit ends the listing and
		 * comes back as `misshapen`.
		 */
		async read(listing: Listing, itemIndex: number): Promise<Listed> {
			const payer = `${runId}|item ${itemIndex}`;
			let paidPages = 0;
			let misshapen: Listed['misshapen'];
			const pageOf = new Map<CopyrightRecord, number>();
			const paidPageIndexes = new Set<number>();
			const fetchPage = async (pageIndex: number): Promise<CopyrightPage> => {
				const { answer, entry } = sharedAnswer(answers, pageKey(listing, pageIndex), payer, async (): Promise<CopyrightPage | MisshapenAnswer> => {
					meter.checkNextCall(price, `${paidPages} page${paidPages === 1 ? '' : 's'} paid by item ${itemIndex + 1}`);
					// The client counts each attempt against the cap before it is sent.
					return await countedCall(ctx, async () =>
						await client.call('enterpriseCopyright', { keyword: listing.keyword, pageIndex, pageSize: listing.pageSize }, copyrightPageSchema, options).then(
							(answer): CopyrightPage | MisshapenAnswer => answer.data,
							// code 0: billed, kept
							(error: unknown) => (error instanceof MisshapenAnswer ? error : Promise.reject(error)),
						),
					);
				});
				const page = await answer;
				if (entry.paidByRun === payer) {
					paidPages++;
					paidPageIndexes.add(pageIndex);
				} else countReused(ctx);
				if (page instanceof MisshapenAnswer) {
					misshapen = { answer: page, pageIndex };
					return { data: [], totalRecords: null, pageIndex, pageSize: listing.pageSize };
				}
				for (const record of page.data) if (!pageOf.has(record)) pageOf.set(record, pageIndex);
				return page;
			};
			return { records: await readCopyrightPages(fetchPage, listing), paidPages, pageOf, paidPageIndexes, misshapen };
		},
		/** Before the first call: the pages the listings will need that this execution has not paid yet. */
		checkEstimate(listings: Listing[]): void {
			const needed = new Map<string, { listing: Listing; pages: number }>();
			for (const listing of listings) {
				// Return All counts its first page here and the others as they come.
				const pages = Number.isFinite(listing.limit) ? Math.ceil(listing.limit / listing.pageSize) : 1;
				const group = `${listing.keyword}|${listing.pageSize}`;
				const known = needed.get(group);
				if (!known || known.pages < pages) needed.set(group, { listing, pages });
			}
			let calls = 0;
			for (const { listing, pages } of needed.values()) {
				for (let pageIndex = 1; pageIndex <= pages; pageIndex++) if (!answers.has(pageKey(listing, pageIndex))) calls++;
			}
			meter.checkEstimate(calls * price, describeCalls(calls, 'enterpriseCopyright'));
		},
	};
}

export function simplifyCopyright(record: CopyrightRecord): IDataObject {
	const timed = withIsoTimes(record, ['RegisterDate', 'PublishDate', 'FinishDate']) as IDataObject;
	return { ...timed, Category: emptyToNull(record.Category) as string | null };
}

/** Get Many over pageIndex / pageSize paging: one output item per copyright record. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const parameters = new ItemParameters(this);
	const reader = pageReader(this, client, callOptions(this));
	const friendly = usesFriendlyNames(this);
	return await runForEachItem<Listing, Listed>(this, {
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
			return { keyword: keyword.value, limit, pageSize, simplify: parameters.get('simplify', itemIndex, friendly) as boolean };
		},
		beforeCalls: async (plans) => reader.checkEstimate([...plans.values()]),
		execute: async (plan, itemIndex) => await reader.read(plan, itemIndex),
		output: (listed, plan) => {
			const records = friendly ? costPerRecord(listed, plan.simplify) : costOnFirstRecord(listed, plan.simplify);
			if (!listed.misshapen) return records;
			// The page that did not fit comes last, with its warning; it carries the cost when no record does.
			const costYuan = records.length === 0 ? roundYuan(listed.paidPages * priceOf('enterpriseCopyright')) : 0;
			return [...records, { ...listed.misshapen.answer.toOutput(), pageIndex: listed.misshapen.pageIndex, costYuan }];
		},
	});
}

/** Version 1: the pages this item paid for are its first record's cost, so the costs add up to the bill. */
function costOnFirstRecord({ records, paidPages }: Listed, simplify: boolean): IDataObject[] {
	return records.map((record, index) => ({
		...(simplify ? simplifyCopyright(record) : (record as IDataObject)),
		costYuan: index === 0 ? roundYuan(paidPages * priceOf('enterpriseCopyright')) : 0,
	}));
}

/**
 * Version 1.1: every record says what its page cost (`pageCostYuan`: the price, or 0 when an earlier
 * item or run of this execution paid for that page), and `costYuan` shares what this item paid
 * evenly among its records (the rounding rest on the last), so the column adds up to the bill.
 */
function costPerRecord({ records, paidPages, pageOf, paidPageIndexes }: Listed, simplify: boolean): IDataObject[] {
	const price = priceOf('enterpriseCopyright');
	const paid = roundYuan(paidPages * price);
	const share = records.length > 0 ? Math.floor((paid / records.length) * 10000) / 10000 : 0;
	return records.map((record, index) => {
		const costYuan = index === records.length - 1 ? roundYuan(paid - share * (records.length - 1)) : share;
		const pageCostYuan = paidPageIndexes.has(pageOf.get(record) ?? 0) ? price : 0;
		return simplify ? { ...friendlyCopyright(record), costYuan, pageCostYuan } : { ...(record as IDataObject), costYuan, pageCostYuan };
	});
}
