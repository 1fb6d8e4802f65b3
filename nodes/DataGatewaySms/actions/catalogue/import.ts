import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { REVIEW_STATUS_LABELS } from '../../../shared/gateway/catalog';
import type { Signature, Template } from '../../../shared/gateway/schemas/sms';
import { asNodeError, GatewayFailure, inputError } from '../../../shared/errors/failures';
import type { GatewayClient } from '../../../shared/transport/gatewayClient';
import { runForEachItem } from '../../../shared/n8n/batch';
import { SMS_VERSION_1_5 } from '../../../shared/n8n/description';
import { countCall, noteLookupRun, type BillKind } from '../../../shared/money/bill';
import { recordSightings, sightingOf, type Sighting } from '../../../shared/store/reviewedCatalogue';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import type { ReviewedKind } from '../changeRun';
import { catalogueStore, saysNotFound } from './access';

/** IDs one run reads at most: the queries are free, yet each takes a turn of the account's rate. */
export const MAX_IMPORT_IDS = 200;

export function importFields(kind: ReviewedKind): INodeProperties[] {
	const noun = kind.label.toLowerCase();
	return [
		{
			displayName: `${kind.label} IDs`,
			name: 'ids',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. 1000-1002, 1077',
			description: `IDs or ranges, e.g. 1000-1002, 1077 (at most ${MAX_IMPORT_IDS}). Send's ${kind.label} list then shows the ${noun}s found.`,
			hint: `The IDs are in the gateway console's SMS settings, beside each ${noun}. Free queries.`,
			displayOptions: {
				show: { resource: [kind.resource], operation: ['import'] },
			},
		},
	];
}

/** The IDs of "1-50, 77": every ID once, in order; a problem for the field otherwise. */
export function parseIdList(text: string): { ids: string[] } | { problem: string } {
	const ids = new Set<string>();
	for (const part of text.split(/[\s,，、;；]+/).filter(Boolean)) {
		const range = /^(\d+)(?:-(\d+))?$/.exec(part);
		if (!range)
			return {
				problem: `has "${part}", which is neither an ID nor a range like 1-50`,
			};
		const from = Number(range[1]);
		const to = Number(range[2] ?? range[1]);
		if (from === 0 || to < from)
			return {
				problem: `has "${part}": IDs start at 1 and a range goes upwards`,
			};
		if (to - from >= MAX_IMPORT_IDS)
			return {
				problem: `has the range ${part}, more than ${MAX_IMPORT_IDS} IDs`,
			};
		for (let id = from; id <= to; id++) ids.add(String(id));
	}
	if (ids.size === 0) return { problem: 'is empty' };
	return { ids: [...ids] };
}

interface ImportResult {
	found: Sighting[];
	notFound: Array<{ id: string; message: string }>;
}

/** Reads the item's IDs with the free query, a few at a time; an ID the gateway says it does not know is "not found", with its words. */
async function readAll(ctx: IExecuteFunctions, client: GatewayClient, kind: ReviewedKind, ids: string[], itemIndex: number): Promise<ImportResult> {
	const concurrency = client.settings.limiter.maxConcurrent;
	const options = callOptions(ctx);
	const result: ImportResult = { found: [], notFound: [] };
	const queue = [...ids];
	const worker = async () => {
		for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
			// Every query reaches the gateway, found or not: the bill counts each.
			countCall(ctx);
			try {
				const object = (await client.call(kind.operations.get, { id }, kind.schema, options)).data as Signature | Template;
				result.found.push({
					...sightingOf(object, 'import'),
					id,
					deleted: false,
				});
			} catch (error) {
				// Any other refusal (the account, the parameters) stops the item with the gateway's words.
				if (!(error instanceof GatewayFailure && saysNotFound(error))) throw asNodeError(ctx.getNode(), error, itemIndex);
				result.notFound.push({ id, message: error.message });
			}
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, ids.length)) }, worker));
	const byId = (a: { id: string }, b: { id: string }) => Number(a.id) - Number(b.id);
	return {
		found: result.found.sort(byId),
		notFound: result.notFound.sort(byId),
	};
}

/** Import to Catalogue: one output item per input item, with what was found and what was not. */
export function importOperation(kind: ReviewedKind) {
	async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
		return await importAll(this, kind);
	}
	// Every query is counted (found or not), not the items: one item may ask for 200 IDs.
	const bill: BillKind = 'freeQueries';
	return { description: importFields(kind), execute, bill };
}

/** "1-50, 77": sorted numeric IDs as ranges, so 50 unknown IDs read as one line. */
export function idRanges(ids: readonly string[]): string {
	const numbers = [...new Set(ids.map(Number))].sort((a, b) => a - b);
	const ranges: string[] = [];
	for (let start = 0; start < numbers.length; ) {
		let end = start;
		while (end + 1 < numbers.length && numbers[end + 1] === numbers[end] + 1) end++;
		ranges.push(start === end ? String(numbers[start]) : `${numbers[start]}-${numbers[end]}`);
		start = end + 1;
	}
	return ranges.join(', ');
}

/** One sentence on what the item's IDs gave, and where to find IDs when some were not found. */
export function importSummary(kind: ReviewedKind, read: number, result: ImportResult): string {
	const noun = kind.label.toLowerCase();
	const found = result.found.map(({ id, name }) => (name ? `${id} "${name}"` : id));
	const parts = [`Found ${result.found.length} of ${read} ${noun} IDs${found.length ? `: ${found.join(', ')}` : ''}.`];
	if (result.notFound.length > 0) parts.push(`Not found: ${idRanges(result.notFound.map(({ id }) => id))}; the gateway console's SMS settings list your ${noun}s with their IDs.`);
	return parts.join(' ');
}

const statusOf = ({ id, name, status }: Sighting) => ({ id, name: name ?? null, status: status ?? null, statusLabel: REVIEW_STATUS_LABELS[String(status)] ?? 'unknown' });

/**
 * The item: from SMS 1.5 a summary sentence and the IDs not found as ranges (one line for "1-50");
 * saved nodes keep one entry per ID not found, with the gateway's words.
 */
function presentImport(ctx: IExecuteFunctions, kind: ReviewedKind, result: ImportResult, ids: string[]): IDataObject {
	const counts = { read: ids.length, imported: result.found.length, found: result.found.map(statusOf) };
	if (ctx.getNode().typeVersion < SMS_VERSION_1_5) return { ...counts, notFound: result.notFound };
	return { summary: importSummary(kind, ids.length, result), ...counts, notFound: idRanges(result.notFound.map(({ id }) => id)), gatewaySaid: result.notFound[0]?.message ?? null };
}

async function importAll(ctx: IExecuteFunctions, kind: ReviewedKind): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(ctx);
	let planned = 0;
	const totals = { found: 0, notFound: 0 };
	const items = await runForEachItem<string[], ImportResult>(ctx, {
		concurrency: 1,
		plan: (itemIndex) => {
			const parsed = parseIdList(String(ctx.getNodeParameter('ids', itemIndex, '')));
			const field = `${kind.label} IDs`;
			if ('problem' in parsed) throw inputError(ctx.getNode(), itemIndex, field, parsed.problem, 'Write IDs and ranges like 1-50, 77.');
			planned += parsed.ids.length;
			if (planned > MAX_IMPORT_IDS) {
				throw inputError(ctx.getNode(), itemIndex, field, `would bring this run to ${planned} IDs, more than ${MAX_IMPORT_IDS}`, 'Import the rest in another run.');
			}
			return parsed.ids;
		},
		execute: async (ids, itemIndex) => {
			const result = await readAll(ctx, client, kind, ids, itemIndex);
			// The catalogue is what was asked for here: a store that cannot keep it fails the item.
			await recordSightings(await catalogueStore(ctx), client.accountKey, kind.resource, result.found);
			totals.found += result.found.length;
			totals.notFound += result.notFound.length;
			return result;
		},
		output: (result, ids) => presentImport(ctx, kind, result, ids),
	});
	noteLookupRun(ctx, { notes: [`${totals.found} found`, `${totals.notFound} not found`] });
	return items;
}
