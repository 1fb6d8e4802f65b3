import type { IExecuteFunctions } from 'n8n-workflow';

import { countedCall, countReused } from '../../../shared/money/bill';
import { MisshapenAnswer } from '../../../shared/errors/failures';
import { copyrightPageSchema, type CopyrightPage } from '../../../shared/gateway/schemas/enterprise';
import { plural } from '../../../shared/output/plural';
import { describeCalls, priceOf } from '../../../shared/money/spend';
import { executionMemory, runIdOf, SharedAnswer, sharedAnswer, type ExecutionMemory } from '../../../shared/state/executionMemory';
import { spendMeter } from '../../../shared/transport/clientForNode';
import type { SpendMeter } from '../../../shared/money/spend';
import type { GatewayClient } from '../../../shared/transport/gatewayClient';
import type { ItemCalls } from '../../../shared/n8n/batch';
import type { LookupContext } from '../../../shared/n8n/lookupOperation';
import { keepForLater, takeKeptAnswers } from '../../../shared/lookups/reuse';
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

/** One item's listing, read and checked; `reuseMs`: Reuse Answers For, as ms (0 = off). */
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
 * The calls of a copyright listing, item by item (the batch runner's ItemCalls). Pages are shared
 * by the whole execution, keyed by (keyword, pageIndex, pageSize): two items with the same keyword
 * and different limits, a later run, or a Retry On Fail re-run after a failure on page k reuse the
 * pages already paid. With Reuse Answers For, pages paid by earlier executions come from the
 * durable store. The spending cap is checked before each new page.
 */
export class PageReader implements ItemCalls<Listing, Listed> {
	readonly concurrency: number;
	private readonly answers: ExecutionMemory['answers'];
	private readonly meter: SpendMeter;
	private readonly runId: string;
	private readonly price = priceOf('enterpriseCopyright');
	/** Pages this run took from the store or kept there, with when they were answered; and those already counted in the bill. */
	private readonly kept = new Map<string, number>();
	private readonly countedAsEarlier = new Set<string>();

	constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly client: GatewayClient,
		private readonly options: LookupContext['options'],
		private readonly hints: StoreHints,
	) {
		this.concurrency = client.settings.limiter.maxConcurrent;
		this.answers = executionMemory(ctx).answers;
		this.meter = spendMeter(ctx, client);
		this.runId = runIdOf(ctx);
	}

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
			if (listing.reuseMs > 0) for (let pageIndex = 1; pageIndex <= pages; pageIndex++) windows.set(this.pageKey(listing, pageIndex), listing.reuseMs);
		}
		await this.takeKeptPages(windows);
		let calls = 0;
		for (const { listing, pages } of needed.values()) {
			for (let pageIndex = 1; pageIndex <= pages; pageIndex++) if (!this.answers.has(this.pageKey(listing, pageIndex))) calls++;
		}
		await this.meter.checkEstimate(calls * this.price, describeCalls(calls, 'enterpriseCopyright'), calls);
	}

	/**
	 * Reads one listing for one item; `paidPages` counts the pages this item paid for, `pageOf` where
	 * each record came from. A page answered with code 0 whose data does not fit ends the listing and
	 * comes back as `misshapen`.
	 */
	async ask(listing: Listing, itemIndex: number): Promise<Listed> {
		const listed: Listed = { records: [], paidPages: 0, pageOf: new Map(), paidPageIndexes: new Set(), answeredAt: new Map(), reusedPageIndexes: new Set() };
		listed.records = await readCopyrightPages(async (pageIndex) => await this.page(listing, itemIndex, pageIndex, listed), listing);
		return listed;
	}

	/** Pages answered from an earlier execution in this run, for the bill. */
	earlierPages(): number {
		return this.countedAsEarlier.size;
	}

	private pageKey(listing: Listing, pageIndex: number): string {
		return this.client.questionKey('enterpriseCopyright', { keyword: listing.keyword, pageIndex, pageSize: listing.pageSize });
	}

	/** Puts the kept pages among the execution's answers, so that they are neither paid nor counted against the cap. */
	private async takeKeptPages(windows: Map<string, number>): Promise<void> {
		for (const key of windows.keys()) if (this.answers.has(key)) windows.delete(key);
		for (const [key, { answer, answeredAt }] of await takeKeptAnswers(this.hints, copyrightPageSchema, windows, 'pages')) {
			this.answers.set(key, SharedAnswer.of(answer, 'an earlier execution'));
			this.kept.set(key, answeredAt);
		}
	}

	/** One page of the item's listing: shared, kept or paid; noted in `listed`. */
	private async page(listing: Listing, itemIndex: number, pageIndex: number, listed: Listed): Promise<CopyrightPage> {
		const key = this.pageKey(listing, pageIndex);
		// Return All reads pages beyond the estimate: they may be kept too.
		if (listing.reuseMs > 0) await this.takeKeptPages(new Map([[key, listing.reuseMs]]));
		const payer = `${this.runId}|item ${itemIndex}`;
		const { answer, entry } = sharedAnswer(this.answers, key, payer, async () => await this.payPage(listing, pageIndex, key, `${plural(listed.paidPages, 'page')} paid by item ${itemIndex + 1}`));
		const page = await answer;
		if (entry.paidByRun === payer) {
			listed.paidPages++;
			listed.paidPageIndexes.add(pageIndex);
		} else if (entry.paidByRun === 'an earlier execution' && !this.countedAsEarlier.has(key)) {
			this.countedAsEarlier.add(key);
		} else countReused(this.ctx);
		if (entry.paidByRun === 'an earlier execution') listed.reusedPageIndexes.add(pageIndex);
		const at = this.kept.get(key);
		if (at !== undefined) listed.answeredAt.set(pageIndex, at);
		if (page instanceof MisshapenAnswer) {
			listed.misshapen = { answer: page, pageIndex };
			return { data: [], totalRecords: null, pageIndex, pageSize: listing.pageSize };
		}
		for (const record of page.data) if (!listed.pageOf.has(record)) listed.pageOf.set(record, pageIndex);
		return page;
	}

	/** A paid page: the cap checked first; kept for later executions when the item asks. */
	private async payPage(listing: Listing, pageIndex: number, key: string, doneSoFar: string): Promise<CopyrightPage | MisshapenAnswer> {
		await this.meter.checkNextCall(this.price, doneSoFar);
		// The client counts each attempt against the cap before it is sent.
		const page = await countedCall(this.ctx, async () =>
			await this.client.call('enterpriseCopyright', { keyword: listing.keyword, pageIndex, pageSize: listing.pageSize }, copyrightPageSchema, this.options).then(
				(answer): CopyrightPage | MisshapenAnswer => answer.data,
				// code 0: billed, kept
				(error: unknown) => (error instanceof MisshapenAnswer ? error : Promise.reject(error)),
			),
		);
		if (listing.reuseMs > 0 && !(page instanceof MisshapenAnswer)) {
			const at = await keepForLater(this.hints, key, page, listing.reuseMs, 'a page');
			if (at !== undefined) this.kept.set(key, at);
		}
		return page;
	}
}
