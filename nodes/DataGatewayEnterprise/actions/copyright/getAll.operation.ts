import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { Batch, callEach } from '../../../shared/n8n/batch';
import { openLookup, type LookupContext } from '../../../shared/n8n/lookupOperation';
import { noteBudget, noteLookupRun, type BillKind } from '../../../shared/money/bill';
import { spendMeter } from '../../../shared/transport/clientForNode';
import { NODE_VERSION_1_2, simplifyProperties } from '../../../shared/n8n/description';
import { errorItem, errorItemForm } from '../../../shared/n8n/errorItems';
import { ItemInput } from '../../../shared/n8n/parameters';
import { emptyToNull, withIsoTimes } from '../../../shared/output/convert';
import { friendlyCopyright } from '../../../shared/output/friendly';
import { COPYRIGHT_DEFAULT_PAGE_SIZE } from '../../../shared/gateway/catalog';
import { priceOf, roundYuan } from '../../../shared/money/spend';
import { fingerprint, newsOptions, takeWhatIsNew, type NewsQuestion, type NewsRule } from '../../../shared/lookups/onlyNew';
import { REUSE_OPTION, reuseFields, reuseWindowMs } from '../../../shared/lookups/reuse';
import { StoreHints } from '../../../shared/lookups/storeHints';
import { keywordField, keywordOf } from '../keywordField';
import { PageReader, type CopyrightRecord, type Listed, type Listing } from './pages';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'enterpriseCopyright';

const showFor = { resource: ['copyright'], operation: ['getAll'] };

const ONLY_NEW_RECORDS: Pick<NewsRule<unknown>, 'kind' | 'option' | 'bill'> = {
	kind: 'records',
	option: {
		displayName: 'Only New Records',
		name: 'onlyNewRecords',
		description: 'Whether to output only copyright records this node has not output before (for scheduled checks); a company with none produces no item',
	},
	bill: { checked: ['company', 'companies'], withNews: 'with new records' },
};
/** A registration number names a record; a record without one is named by its content. */
const recordPrint = (record: CopyrightRecord) => (record.RegisterNo ? String(record.RegisterNo) : fingerprint(record));

export const description: INodeProperties[] = [
	{ ...keywordField('Company name or key number whose software copyright registrations to list'), displayOptions: { show: showFor } },
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

/**
 * Get Many over pageIndex / pageSize paging: one output item per copyright record. The steps of
 * the other lookups: read and check each item, take kept pages and check the spending cap, read
 * the pages (the batch runner), take what is new, present.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const lookup = await openLookup(this);
	const hints = new StoreHints(this);
	const batch = planListings(this, lookup);
	const reader = new PageReader(this, lookup.client, lookup.options, hints);
	try {
		try {
			await reader.prepare([...batch.waiting()].map((itemIndex) => batch.plans[itemIndex] as Listing));
		} catch (error) {
			batch.refuseAll(error);
		}
		await callEach(batch, reader);
	} finally {
		// Gives back what the listing reserved and did not spend.
		noteBudget(this, await spendMeter(this, lookup.client).settle());
	}
	noteLookupRun(this, { earlier: reader.earlierPages() });
	const fresh = await newRecords(this, lookup, hints, batch);
	const items = presentListings(lookup, batch, fresh);
	hints.show();
	return items;
}

type ListingBatch = Batch<Listing, Listed>;

/** Every item read and checked in one pass, as the single-call lookups (lookupRun.ts planItems). */
function planListings(ctx: IExecuteFunctions, lookup: LookupContext): ListingBatch {
	const batch: ListingBatch = new Batch(ctx);
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		try {
			batch.plans[itemIndex] = planListing(new ItemInput(lookup.parameters, batch.node, itemIndex), lookup.friendly);
		} catch (error) {
			batch.fail(itemIndex, error);
		}
	}
	return batch;
}

function planListing(item: ItemInput, friendly: boolean): Listing {
	const keyword = keywordOf(item, 'Enter a company name or key number.');
	const returnAll = item.read('returnAll', false);
	const limit = returnAll ? Number.POSITIVE_INFINITY : Number(item.read('limit', 50));
	if (!(limit >= 1)) throw item.fail('Limit', `${limit} is below 1`, 'Set Limit to 1 or more, or turn on Return All.');
	const chosen = item.read<IDataObject>('options', {});
	const pageSize = Number(chosen.pageSize ?? COPYRIGHT_DEFAULT_PAGE_SIZE);
	if (!Number.isInteger(pageSize) || pageSize < 1) {
		throw item.fail('Page Size', `${pageSize} is not a whole number of 1 or more`, 'Set Page Size to 10 or another positive whole number.');
	}
	const onlyNew = chosen.onlyNewRecords === true;
	return { keyword, limit, pageSize, simplify: item.read('simplify', friendly), reuseMs: reuseWindowMs(chosen.reuseAnswersHours), onlyNew, startOver: onlyNew && chosen.startOver === true };
}

/** Only New Records: the registration numbers new to this node, per keyword (undefined when no item asked). */
async function newRecords(ctx: IExecuteFunctions, lookup: LookupContext, hints: StoreHints, batch: ListingBatch): Promise<Map<string, Set<string>> | undefined> {
	const asked: NewsQuestion[] = [];
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		const listing = batch.plans[itemIndex];
		const listed = batch.answers[itemIndex] as Listed | undefined;
		if (!listing?.onlyNew || !batch.isAnswered(itemIndex) || !listed) continue;
		asked.push({ question: questionOf(lookup, listing), prints: listed.records.map(recordPrint), startOver: listing.startOver });
	}
	return asked.length === 0 ? undefined : await takeWhatIsNew(ctx, hints, ONLY_NEW_RECORDS, asked);
}

const questionOf = (lookup: LookupContext, listing: Listing) => lookup.client.questionKey('enterpriseCopyright', { keyword: listing.keyword });

/** Each item's records (only the new ones, where it asked), with their costs and reuse fields, then a misshapen page's warning; or its error item. */
function presentListings(lookup: LookupContext, batch: ListingBatch, fresh: Map<string, Set<string>> | undefined): INodeExecutionData[] {
	const form = errorItemForm(batch.ctx);
	const costs: CostShape = batch.node.typeVersion >= COST_PER_PAGE_VERSION ? 'perPage' : batch.node.typeVersion >= NODE_VERSION_1_2 ? 'oneColumn' : 'twoColumns';
	const items: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < batch.size; itemIndex++) {
		const error = batch.errors[itemIndex];
		if (error) items.push(errorItem(error, itemIndex, form));
		if (error || !batch.isAnswered(itemIndex)) continue;
		const listing = batch.plans[itemIndex] as Listing;
		let listed = batch.answers[itemIndex] as Listed;
		const news = fresh && listing.onlyNew ? (fresh.get(questionOf(lookup, listing)) ?? new Set<string>()) : undefined;
		if (news) listed = { ...listed, records: listed.records.filter((record) => news.has(recordPrint(record))) };
		for (const json of recordsOf(listed, listing, lookup.friendly, costs)) items.push({ json, pairedItem: { item: itemIndex } });
	}
	return items;
}

/** Where a listing's cost shows: version 1.1's share and page columns, 1.2's one shared column, 1.4's page cost on its first record. */
type CostShape = 'twoColumns' | 'oneColumn' | 'perPage';
const COST_PER_PAGE_VERSION = 1.4;

function recordsOf(listed: Listed, listing: Listing, friendly: boolean, costs: CostShape): IDataObject[] {
	const perPage = friendly && costs === 'perPage' ? costPerPage(listed) : undefined;
	const shaped = friendly ? (perPage ? withPageCosts(listed, listing.simplify, perPage.costs) : costPerRecord(listed, listing.simplify, costs === 'oneColumn')) : costOnFirstRecord(listed, listing.simplify);
	const records = shaped.map((record, index) => (listing.reuseMs > 0 ? { ...record, ...reuseFieldsOf(listed, listed.records[index]) } : record));
	if (!listed.misshapen) return records;
	// The page that did not fit comes last, with its warning; it carries the cost when no record does (1.4: the cost no record shows).
	const costYuan = perPage ? perPage.unshown : records.length === 0 ? roundYuan(listed.paidPages * priceOf('enterpriseCopyright')) : 0;
	return [...records, { ...listed.misshapen.answer.toOutput(), pageIndex: listed.misshapen.pageIndex, costYuan }];
}

/**
 * Version 1.4: a page's price once, on the first shown record of each page this item paid for;
 * the other records 0. A paid page with no record shown (Only New left them out, or the page did
 * not fit) goes on the misshapen page's warning when there is one, else on the first record, so
 * the column still adds up to the bill.
 */
function costPerPage({ records, pageOf, paidPageIndexes, misshapen }: Listed): { costs: number[]; unshown: number } {
	const price = priceOf('enterpriseCopyright');
	const costs = records.map(() => 0);
	const firstOfPage = new Map<number, number>();
	records.forEach((record, index) => {
		const page = pageOf.get(record) ?? 0;
		if (!firstOfPage.has(page)) firstOfPage.set(page, index);
	});
	let unshown = 0;
	for (const page of paidPageIndexes) {
		const at = firstOfPage.get(page);
		if (at === undefined) unshown += price;
		else costs[at] += price;
	}
	if (!misshapen && records.length > 0) {
		costs[0] += unshown;
		unshown = 0;
	}
	return { costs: costs.map(roundYuan), unshown: roundYuan(unshown) };
}

function withPageCosts({ records }: Listed, simplify: boolean, costs: number[]): IDataObject[] {
	return records.map((record, index) => {
		const fields: IDataObject = { ...(simplify ? friendlyCopyright(record) : (record as IDataObject)), costYuan: costs[index] };
		delete fields.pageCostYuan;
		return fields;
	});
}

/** With Reuse Answers For: whether the record's page came from an earlier execution, and when the gateway gave it. */
function reuseFieldsOf(listed: Listed, record: CopyrightRecord | undefined): IDataObject {
	const pageIndex = record ? (listed.pageOf.get(record) ?? 0) : 0;
	return reuseFields(listed.reusedPageIndexes.has(pageIndex), listed.answeredAt.get(pageIndex));
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
