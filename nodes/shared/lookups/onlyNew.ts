/**
 * Only what is new, for scheduled runs: each node keeps, per question, what it has output before,
 * and an item with nothing new produces no output item (as Remove Duplicates does with items seen
 * in earlier executions). The state is the node's own (workflow and node id) in the durable store,
 * kept SEEN_DAYS after the last run that saw the question. Start Over moves the node to a new
 * generation: what was seen before is no longer read, and expires.
 */
import { createHash } from 'node:crypto';
import { NodeOperationError, type IExecuteFunctions, type INodeProperties } from 'n8n-workflow';

import { noteLookupRun } from '../money/bill';
import type { DurableStore } from '../store/durableStore';
import type { StoreHints } from './storeHints';

export const SEEN_DAYS = 90;
const SEEN_TTL_MS = SEEN_DAYS * 24 * 3_600_000;

/** How a lookup tells news: unseen records (violations, copyrights), or an answer unlike the last one output (registration, telephone). */
export interface NewsRule<Answer> {
	kind: 'records' | 'changed';
	/** The option's name and text. */
	option: { displayName: string; name: string; description: string };
	/** Records: one fingerprint per record. Changed: one fingerprint of the meaningful content. */
	fingerprints: (answer: Answer) => string[];
	/** Records only: the answer with only the records whose fingerprint is new. */
	narrow?: (answer: Answer, isNew: (fingerprint: string) => boolean) => Answer;
	/** Bill words: "12 plates checked, 2 with new violations". */
	bill: { checked: [string, string]; withNews: string };
}

export function newsOptions(rule: Pick<NewsRule<unknown>, 'option'>): INodeProperties[] {
	return [
		{ ...rule.option, type: 'boolean', default: false },
		{
			displayName: 'Start Over',
			name: 'startOver',
			type: 'boolean',
			default: false,
			description: `Whether to forget what this node output before, so that this run counts everything as new (${rule.option.displayName}). Turn it off again after one run.`,
			displayOptions: { show: { [rule.option.name]: [true] } },
		},
	];
}

/** Short, stable and free of the personal data it stands for. */
export const fingerprint = (value: unknown) => createHash('sha256').update(stableJson(value)).digest('hex').slice(0, 16);

/** JSON with keys in order, so that equal content has one text. */
export function stableJson(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
	if (value && typeof value === 'object') {
		return `{${Object.keys(value)
			.sort()
			.map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
			.join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}

/** The node's own scope: its workflow and id (kept when the node is renamed). */
export function nodeScope(ctx: IExecuteFunctions): string {
	return `${ctx.getWorkflow().id ?? ''}|${ctx.getNode().id ?? ctx.getNode().name}`;
}

/** What the node keeps per question: everything it output (`seen`), and what its last run output (`last`). */
interface SeenState {
	seen: string[];
	last: string[];
}

/**
 * Records what each question's answer holds and returns, per question, the fingerprints that are
 * new to this node (empty: nothing new). One atomic update for the whole run. `retry` (n8n's
 * "Retry execution" of a failed one): what the node's last run output for a question counts as new
 * again, so that a retried execution reports what the failed one took (if no run came between).
 * `phones`: the number a question asks about (Telephone), written with its state so that erasing it finds it.
 */
export async function takeNews(
	store: DurableStore,
	scope: string,
	kind: NewsRule<unknown>['kind'],
	answers: Map<string, string[]>,
	{ startOver = false, retry = false, phones }: { startOver?: boolean; retry?: boolean; phones?: ReadonlyMap<string, string> } = {},
): Promise<Map<string, string[]>> {
	const generationKey = `seen-generation|${scope}`;
	// The generation has no expiry: it is one small value per node, and losing it would make everything new again.
	const generation = startOver
		? await store.update([generationKey], (_values, now) => ({ writes: [{ key: generationKey, value: String(now) }], result: String(now) }))
		: ((await store.read([generationKey]))[0] ?? '0');
	const questions = [...answers.keys()];
	const keys = questions.map((question) => `seen|${scope}|${generation}|${fingerprint(question)}`);
	return await store.update(keys, (values) => {
		const news = new Map<string, string[]>();
		const writes = questions.map((question, index) => {
			const state = parseState(values[index]);
			// Stryker disable next-line ArrayDeclaration: every question is a key of answers
			const now = [...new Set(answers.get(question) ?? [])];
			const seen = new Set(state.seen);
			// Stryker disable next-line ArrayDeclaration: a fingerprint is 16 hex characters, never the text a mutant puts here
			const again = new Set(retry ? state.last : []);
			const fresh =
				kind === 'records'
					? now.filter((print) => !seen.has(print) || again.has(print))
					: now.join() !== state.seen.join() || (retry && now.join() === state.last.join())
						? now
						: [];
			news.set(question, fresh);
			const next: SeenState = { seen: kind === 'records' ? [...seen, ...fresh.filter((print) => !seen.has(print))] : now, last: fresh };
			const phone = phones?.get(question);
			return { key: keys[index], value: JSON.stringify(next), ttlMs: SEEN_TTL_MS, ...(phone === undefined ? {} : { phone }) };
		});
		return { writes, result: news };
	});
}

function parseState(value: string | undefined): SeenState {
	try {
		const parsed = (value === undefined ? {} : JSON.parse(value)) as Partial<SeenState>;
		const list = (entry: unknown) => (Array.isArray(entry) ? entry.map(String) : []);
		return { seen: list(parsed.seen), last: list(parsed.last) };
	} catch {
		// Stryker disable next-line ArrayDeclaration: a fingerprint is 16 hex characters, never the text a mutant puts here
		return { seen: [], last: [] };
	}
}

/** One item that asked for only what is new: its question and the fingerprints of its answer. */
export interface NewsQuestion {
	question: string;
	prints: string[];
	startOver: boolean;
	/** The number the question asks about (Telephone): what erasing that number finds. */
	phone?: string;
}

/**
 * Take what is new, for every lookup (the paged copyright listing too): one update of the node's
 * seen-state for the whole run, then the bill counts the items checked and those with news.
 * Returns, per question, the fingerprints new to this node. Items with the same question share
 * it: what either of them holds is recorded.
 */
export async function takeWhatIsNew(ctx: IExecuteFunctions, hints: StoreHints, rule: Pick<NewsRule<unknown>, 'kind' | 'option' | 'bill'>, items: NewsQuestion[]): Promise<Map<string, Set<string>>> {
	const answers = new Map<string, string[]>();
	// Stryker disable next-line ConditionalExpression: a question mapped to undefined reads as one without a number
	const phones = new Map(items.flatMap(({ question, phone }) => (phone === undefined ? [] : [[question, phone] as const])));
	for (const { question, prints } of items) {
		const known = answers.get(question);
		answers.set(question, known ? [...new Set([...known, ...prints])] : prints);
	}
	const startOver = items.some((item) => item.startOver);
	let where = 'the store';
	const taken = await hints
		.open()
		.then(async (store) => {
			where = store.label;
			return await takeNews(store, nodeScope(ctx), rule.kind, answers, { startOver, retry: ctx.getMode() === 'retry', phones });
		})
		.catch((error: unknown) => {
			throw new NodeOperationError(ctx.getNode(), `${rule.option.displayName} could not read what this node output before, in ${where}: ${error instanceof Error ? error.message : String(error)}`, {
				description: 'Nothing was output, so nothing is reported twice. The answers are kept for this execution: Retry On Fail does not pay for them again.',
			});
		});
	const fresh = new Map([...taken].map(([question, prints]) => [question, new Set(prints)]));
	// Stryker disable next-line OptionalChaining: takeNews answers for every question asked
	const withNews = items.filter((item) => (fresh.get(item.question)?.size ?? 0) > 0).length;
	noteLookupRun(ctx, { news: { checked: items.length, withNews, words: rule.bill } });
	return fresh;
}
