import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { checkKeyword } from '../../../shared/checks/keyword';
import { openLookup } from '../../../shared/n8n/lookupOperation';
import { noteLookupRun, type BillKind } from '../../../shared/money/bill';
import { NODE_VERSION_1_2, simplifyProperties } from '../../../shared/n8n/description';
import { inputError } from '../../../shared/errors/failures';
import { emptyToNull, withIsoTimes } from '../../../shared/output/convert';
import { friendlyCopyright } from '../../../shared/output/friendly';
import { COPYRIGHT_DEFAULT_PAGE_SIZE } from '../../../shared/gateway/catalog';
import { priceOf, roundYuan } from '../../../shared/money/spend';
import { chinaIso } from '../../../shared/lookups/chinaTime';
import { fingerprint, newsOptions, nodeScope, takeNews } from '../../../shared/lookups/onlyNew';
import { REUSE_OPTION, reuseWindowMs } from '../../../shared/lookups/reuse';
import { StoreHints } from '../../../shared/lookups/storeHints';
import { pageReader, type CopyrightRecord, type Listed, type Listing } from './pages';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'enterpriseCopyright';

const showFor = { resource: ['copyright'], operation: ['getAll'] };

const ONLY_NEW_RECORDS = {
	option: {
		displayName: 'Only New Records',
		name: 'onlyNewRecords',
		description: 'Whether to output only copyright records this node has not output before (for scheduled checks); a company with none produces no item',
	},
};
/** A registration number names a record; a record without one is named by its content. */
const recordPrint = (record: CopyrightRecord) => (record.RegisterNo ? String(record.RegisterNo) : fingerprint(record));

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
			REUSE_OPTION,
			...newsOptions(ONLY_NEW_RECORDS),
		],
	},
];

export function simplifyCopyright(record: CopyrightRecord): IDataObject {
	const timed = withIsoTimes(record, ['RegisterDate', 'PublishDate', 'FinishDate']) as IDataObject;
	return { ...timed, Category: emptyToNull(record.Category) as string | null };
}

/** Get Many over pageIndex / pageSize paging: one output item per copyright record. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const { client, parameters, options, friendly } = await openLookup(this);
	const hints = new StoreHints(this);
	const reader = pageReader(this, client, options, hints);
	const oneCostColumn = this.getNode().typeVersion >= NODE_VERSION_1_2;
	const news = onlyNewRecords(this, hints);
	const items = await runForEachItem<Listing, Listed>(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => {
			const keyword = checkKeyword(parameters.get('keyword', itemIndex, '') as string);
			if (!keyword.ok) {
				throw inputError(this.getNode(), itemIndex, 'Keyword', keyword.value, 'Enter a company name or key number.');
			}
			const returnAll = parameters.get('returnAll', itemIndex, false) as boolean;
			const limit = returnAll ? Number.POSITIVE_INFINITY : Number(parameters.get('limit', itemIndex, 50));
			if (!(limit >= 1)) throw inputError(this.getNode(), itemIndex, 'Limit', `${limit} is below 1`, 'Set Limit to 1 or more, or turn on Return All.');
			const chosen = parameters.get('options', itemIndex, {}) as IDataObject;
			const pageSize = Number(chosen.pageSize ?? COPYRIGHT_DEFAULT_PAGE_SIZE);
			if (!Number.isInteger(pageSize) || pageSize < 1) {
				throw inputError(this.getNode(), itemIndex, 'Page Size', `${pageSize} is not a whole number of 1 or more`, 'Set Page Size to 10 or another positive whole number.');
			}
			const onlyNew = chosen.onlyNewRecords === true;
			return {
				keyword: keyword.value,
				limit,
				pageSize,
				simplify: parameters.get('simplify', itemIndex, friendly) as boolean,
				reuseMs: reuseWindowMs(chosen.reuseAnswersHours),
				onlyNew,
				startOver: onlyNew && chosen.startOver === true,
			};
		},
		beforeCalls: async (plans) => await reader.prepare([...plans.values()]),
		execute: async (plan, itemIndex) => {
			const listed = await reader.read(plan, itemIndex);
			return plan.onlyNew ? await news.narrow(client.questionKey('enterpriseCopyright', { keyword: plan.keyword }), listed, plan.startOver) : listed;
		},
		output: (listed, plan) => {
			const records = (friendly ? costPerRecord(listed, plan.simplify, oneCostColumn) : costOnFirstRecord(listed, plan.simplify)).map((record, index) =>
				plan.reuseMs > 0 ? { ...record, ...reuseFields(listed, listed.records[index]) } : record,
			);
			if (!listed.misshapen) return records;
			// The page that did not fit comes last, with its warning; it carries the cost when no record does.
			const costYuan = records.length === 0 ? roundYuan(listed.paidPages * priceOf('enterpriseCopyright')) : 0;
			return [...records, { ...listed.misshapen.answer.toOutput(), pageIndex: listed.misshapen.pageIndex, costYuan }];
		},
	});
	noteLookupRun(this, { earlier: reader.earlierPages(), news: news.tally() });
	hints.show();
	return items;
}

/** With Reuse Answers For: whether the record's page came from an earlier execution, and when the gateway gave it. */
function reuseFields(listed: Listed, record: CopyrightRecord | undefined): IDataObject {
	const pageIndex = record ? (listed.pageOf.get(record) ?? 0) : 0;
	const answeredAt = listed.answeredAt.get(pageIndex);
	return { reused: listed.reusedPageIndexes.has(pageIndex), answeredAt: answeredAt === undefined ? null : chinaIso(answeredAt) };
}

/**
 * Only New Records: each listing keeps only the records this node has not output before. Items
 * take their news one after another, so that Start Over moves the node to a new generation once,
 * and items with the same keyword share one answer.
 */
function onlyNewRecords(ctx: IExecuteFunctions, hints: StoreHints) {
	let queue: Promise<unknown> = Promise.resolve();
	let startedOver = false;
	const taken = new Map<string, Promise<Set<string>>>();
	let checked = 0;
	let withNews = 0;
	const take = (question: string, prints: string[], startOver: boolean) => {
		const work = async () => {
			const store = await hints.open();
			const fresh = await takeNews(store, nodeScope(ctx), 'records', new Map([[question, prints]]), { startOver: startOver && !startedOver, retry: ctx.getMode() === 'retry' });
			startedOver ||= startOver;
			return new Set(fresh.get(question));
		};
		const next = queue.then(work, work);
		queue = next.catch(() => undefined);
		return next;
	};
	return {
		async narrow(question: string, listed: Listed, startOver: boolean): Promise<Listed> {
			let fresh = taken.get(question);
			if (!fresh) taken.set(question, (fresh = take(question, listed.records.map(recordPrint), startOver)));
			const news = await fresh;
			const records = listed.records.filter((record) => news.has(recordPrint(record)));
			checked++;
			if (records.length > 0) withNews++;
			return { ...listed, records };
		},
		tally: () => (checked > 0 ? { checked, withNews, words: { checked: ['company', 'companies'] as [string, string], withNews: 'with new records' } } : undefined),
	};
}

/** Version 1: the pages this item paid for are its first record's cost, so the costs add up to the bill. */
function costOnFirstRecord({ records, paidPages }: Listed, simplify: boolean): IDataObject[] {
	return records.map((record, index) => ({
		...(simplify ? simplifyCopyright(record) : (record as IDataObject)),
		costYuan: index === 0 ? roundYuan(paidPages * priceOf('enterpriseCopyright')) : 0,
	}));
}

/**
 * Version 1.1 on: `costYuan` shares what this item paid evenly among its records (the rounding rest
 * on the last), so the column adds up to the bill. Version 1.1 also says on every record what its
 * page cost (`pageCostYuan`: the price, or 0 when an earlier item or run of this execution paid for
 * that page); adding that column up overstated the bill, so 1.2 leaves it out.
 */
function costPerRecord({ records, paidPages, pageOf, paidPageIndexes }: Listed, simplify: boolean, oneCostColumn: boolean): IDataObject[] {
	const price = priceOf('enterpriseCopyright');
	const paid = roundYuan(paidPages * price);
	const share = records.length > 0 ? Math.floor((paid / records.length) * 10000) / 10000 : 0;
	return records.map((record, index) => {
		const costYuan = index === records.length - 1 ? roundYuan(paid - share * (records.length - 1)) : share;
		const fields = simplify ? friendlyCopyright(record) : (record as IDataObject);
		if (oneCostColumn) {
			const withoutPageCost: IDataObject = { ...fields, costYuan };
			delete withoutPageCost.pageCostYuan;
			return withoutPageCost;
		}
		const pageCostYuan = paidPageIndexes.has(pageOf.get(record) ?? 0) ? price : 0;
		return { ...fields, costYuan, pageCostYuan };
	});
}
