import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { REVIEW_STATUS_LABELS } from '../../../shared/gateway/catalog';
import type { Signature, Template } from '../../../shared/gateway/schemas/sms';
import { asNodeError, GatewayFailure, inputError } from '../../../shared/errors/failures';
import type { GatewayClient } from '../../../shared/transport/gatewayClient';
import { runForEachItem } from '../../../shared/n8n/batch';
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
			placeholder: 'e.g. 1-50, 77, 80',
			description: `IDs and ranges of IDs to read, separated by commas or spaces; at most ${MAX_IMPORT_IDS} a run. Found ${noun}s go into the catalogue that Send's ${kind.label} list shows; IDs the gateway does not know are listed in the output.`,
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
	return { description: importFields(kind), execute };
}

async function importAll(ctx: IExecuteFunctions, kind: ReviewedKind): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(ctx);
	let planned = 0;
	return await runForEachItem<string[], ImportResult>(ctx, {
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
			return result;
		},
		output: (result, ids): IDataObject => ({
			read: ids.length,
			imported: result.found.length,
			found: result.found.map(({ id, name, status }) => ({
				id,
				name: name ?? null,
				status: status ?? null,
				statusLabel: REVIEW_STATUS_LABELS[String(status)] ?? 'unknown',
			})),
			notFound: result.notFound,
		}),
	});
}
