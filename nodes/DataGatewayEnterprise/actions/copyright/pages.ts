import type { IExecuteFunctions } from 'n8n-workflow';

import { countedCall, countReused } from '../../../shared/money/bill';
import { MisshapenAnswer } from '../../../shared/errors/failures';
import { copyrightPageSchema, type CopyrightPage } from '../../../shared/gateway/schemas/enterprise';
import { parseAnswer } from '../../../shared/gateway/schemas/fastParse';
import { plural } from '../../../shared/output/plural';
import { describeCalls, priceOf } from '../../../shared/money/spend';
import { executionMemory, runIdOf, SharedAnswer, sharedAnswer } from '../../../shared/state/executionMemory';
import { spendMeter } from '../../../shared/transport/clientForNode';
import type { GatewayClient } from '../../../shared/transport/gatewayClient';
import type { LookupContext } from '../../../shared/n8n/lookupOperation';
import { keepAnswer, readKeptAnswers } from '../../../shared/lookups/reuse';
import type { StoreHints } from '../../../shared/lookups/storeHints';

export type CopyrightRecord = CopyrightPage['data'][number];

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

/** `reuseMs`: Reuse Answers For, as ms (0 = off). */
export type Listing = { keyword: string; limit: number; pageSize: number; simplify: boolean; reuseMs: number; onlyNew: boolean; startOver: boolean };
export type Listed = {
	records: CopyrightRecord[];
	paidPages: number;
	pageOf: Map<CopyrightRecord, number>;
	paidPageIndexes: Set<number>;
	/** With Reuse Answers For: when the gateway answered each page, and which came from an earlier execution. */
	answeredAt: Map<number, number>;
	reusedPageIndexes: Set<number>;
	misshapen?: { answer: MisshapenAnswer; pageIndex: number };
};

/**
 * Pages are shared by the whole execution, keyed by (keyword, pageIndex, pageSize): two items with
 * the same keyword and different limits, a later run, or a Retry On Fail re-run after a failure
 * on page k reuse the pages already paid. With Reuse Answers For, pages paid by earlier executions
 * come from the durable store. The spending cap is checked before each new page.
 */
export function pageReader(ctx: IExecuteFunctions, client: GatewayClient, options: LookupContext['options'], hints: StoreHints) {
	const answers = executionMemory(ctx).answers;
	const meter = spendMeter(ctx, client);
	const runId = runIdOf(ctx);
	const price = priceOf('enterpriseCopyright');
	const pageKey = (listing: Listing, pageIndex: number) =>
		client.questionKey('enterpriseCopyright', { keyword: listing.keyword, pageIndex, pageSize: listing.pageSize });
	/** Pages this run took from the store, with when they were answered; and those already counted in the bill. */
	const kept = new Map<string, number>();
	const countedAsEarlier = new Set<string>();

	/** Puts the kept pages among the execution's answers, so that they are neither paid nor counted against the cap. */
	async function takeKeptPages(windows: Map<string, number>): Promise<void> {
		for (const key of windows.keys()) if (answers.has(key)) windows.delete(key);
		if (windows.size === 0) return;
		const found = await hints.attempt('Reuse Answers For', 'the pages were asked again', async (store) => await readKeptAnswers(store, windows));
		for (const [key, { data, answeredAt }] of found ?? []) {
			const parsed = parseAnswer(copyrightPageSchema, data);
			if (!parsed.success) continue;
			answers.set(key, SharedAnswer.of(parsed.data, 'an earlier execution'));
			kept.set(key, answeredAt);
		}
	}

	return {
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
			const answeredAt = new Map<number, number>();
			const reusedPageIndexes = new Set<number>();
			const fetchPage = async (pageIndex: number): Promise<CopyrightPage> => {
				const key = pageKey(listing, pageIndex);
				// Return All reads pages beyond the estimate: they may be kept too.
				if (listing.reuseMs > 0) await takeKeptPages(new Map([[key, listing.reuseMs]]));
				const { answer, entry } = sharedAnswer(answers, key, payer, async (): Promise<CopyrightPage | MisshapenAnswer> => {
					meter.checkNextCall(price, `${plural(paidPages, 'page')} paid by item ${itemIndex + 1}`);
					// The client counts each attempt against the cap before it is sent.
					const page = await countedCall(ctx, async () =>
						await client.call('enterpriseCopyright', { keyword: listing.keyword, pageIndex, pageSize: listing.pageSize }, copyrightPageSchema, options).then(
							(answer): CopyrightPage | MisshapenAnswer => answer.data,
							// code 0: billed, kept
							(error: unknown) => (error instanceof MisshapenAnswer ? error : Promise.reject(error)),
						),
					);
					if (listing.reuseMs > 0 && !(page instanceof MisshapenAnswer)) {
						const at = await hints.attempt('Reuse Answers For', 'a page was not kept for later runs', async (store) => await keepAnswer(store, key, page, listing.reuseMs));
						if (at !== undefined) kept.set(key, at);
					}
					return page;
				});
				const page = await answer;
				if (entry.paidByRun === payer) {
					paidPages++;
					paidPageIndexes.add(pageIndex);
				} else if (entry.paidByRun === 'an earlier execution' && !countedAsEarlier.has(key)) {
					countedAsEarlier.add(key);
				} else countReused(ctx);
				if (entry.paidByRun === 'an earlier execution') reusedPageIndexes.add(pageIndex);
				const at = kept.get(key);
				if (at !== undefined) answeredAt.set(pageIndex, at);
				if (page instanceof MisshapenAnswer) {
					misshapen = { answer: page, pageIndex };
					return { data: [], totalRecords: null, pageIndex, pageSize: listing.pageSize };
				}
				for (const record of page.data) if (!pageOf.has(record)) pageOf.set(record, pageIndex);
				return page;
			};
			const records = await readCopyrightPages(fetchPage, listing);
			return { records, paidPages, pageOf, paidPageIndexes, answeredAt, reusedPageIndexes, misshapen };
		},
		/** Before the first call: kept pages taken, then the pages still to pay checked against the cap. */
		async prepare(listings: Listing[]): Promise<void> {
			const needed = new Map<string, { listing: Listing; pages: number }>();
			for (const listing of listings) {
				// Return All counts its first page here and the others as they come.
				const pages = Number.isFinite(listing.limit) ? Math.ceil(listing.limit / listing.pageSize) : 1;
				const group = `${listing.keyword}|${listing.pageSize}`;
				const known = needed.get(group);
				if (!known || known.pages < pages || known.listing.reuseMs < listing.reuseMs) needed.set(group, { listing, pages: Math.max(pages, known?.pages ?? 0) });
			}
			const windows = new Map<string, number>();
			for (const { listing, pages } of needed.values()) {
				if (listing.reuseMs > 0) for (let pageIndex = 1; pageIndex <= pages; pageIndex++) windows.set(pageKey(listing, pageIndex), listing.reuseMs);
			}
			await takeKeptPages(windows);
			let calls = 0;
			for (const { listing, pages } of needed.values()) {
				for (let pageIndex = 1; pageIndex <= pages; pageIndex++) if (!answers.has(pageKey(listing, pageIndex))) calls++;
			}
			meter.checkEstimate(calls * price, describeCalls(calls, 'enterpriseCopyright'));
		},
		/** Pages answered from an earlier execution in this run, for the bill. */
		earlierPages: () => countedAsEarlier.size,
	};
}
