/**
 * Reuse Answers For: a paid answer kept in the durable store, so that any execution of any workflow
 * with the same credential gets it without a call while it is young enough. Only answers the
 * gateway billed and that fit their schema are kept: a refusal, a failure or a misshapen answer
 * never reaches `keepAnswer`.
 */
import type { IDataObject, INodeProperties } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { parseAnswer } from '../gateway/schemas/fastParse';
import type { DurableStore, StoreWrite } from '../store/durableStore';
import { chinaIso } from './chinaTime';
import type { StoreHints } from './storeHints';

export const REUSE_OPTION: INodeProperties = {
	displayName: 'Reuse Answers For (Hours)',
	name: 'reuseAnswersHours',
	type: 'number',
	typeOptions: { minValue: 0, numberPrecision: 2 },
	default: 0,
	description:
		'Return an answer received within this many hours, by any workflow with this credential, instead of paying for the same question again. The item then says reused: true and when it was answered. 0 = always ask the gateway.',
	hint: 'Answers are kept in the shared store (docs/durable-store.md) for this many hours',
};

/** The hours read from the option, as ms; anything not a positive number is off. */
export function reuseWindowMs(hours: unknown): number {
	const number = Number(hours);
	// Stryker disable next-line EqualityOperator: 0 hours is 0 ms either way
	return Number.isFinite(number) && number > 0 ? number * 3_600_000 : 0;
}

export interface StoredAnswer {
	data: unknown;
	/** The store's clock when the gateway answered. */
	answeredAt: number;
}

/** The store key of a question: the question key holds the account's hash, the operation and the request, never the appCode. */
const answerKey = (questionKey: string) => `lookup-answer|${questionKey}`;

/** The kept answers of these questions that are younger than each question's window. */
export async function readKeptAnswers(store: DurableStore, windows: Map<string, number>): Promise<Map<string, StoredAnswer>> {
	const questions = [...windows.keys()];
	const [values, now] = await Promise.all([store.read(questions.map(answerKey)), store.now()]);
	const kept = new Map<string, StoredAnswer>();
	questions.forEach((question, index) => {
		const value = values[index];
		// Stryker disable next-line ConditionalExpression: JSON.parse(undefined) throws, and the catch ignores it the same way
		if (value === undefined) return;
		try {
			const parsed = JSON.parse(value) as Partial<StoredAnswer>;
			if (typeof parsed.answeredAt === 'number' && 'data' in parsed && now - parsed.answeredAt <= (windows.get(question) ?? 0)) {
				kept.set(question, { data: parsed.data, answeredAt: parsed.answeredAt });
			}
		} catch {
			// A value this package did not write is ignored: the question is asked again.
		}
	});
	return kept;
}

/** Until when the answer kept before was to be kept; 0 when there is none (or an older version wrote it, without `keepUntil`). */
function keptUntil(value: string | undefined): number {
	// Stryker disable next-line ConditionalExpression: JSON.parse(undefined) throws, and the catch answers 0 the same way
	if (value === undefined) return 0;
	try {
		const parsed = JSON.parse(value) as { keepUntil?: unknown };
		return typeof parsed.keepUntil === 'number' ? parsed.keepUntil : 0;
	} catch {
		return 0;
	}
}

/**
 * Keeps a billed answer for `windowMs`, or as long as the answer it replaces was to be kept if that
 * is longer: a node with a short window must not cut what a node with a long one relies on.
 * `phone`: the number the question is about (Telephone), so that erasing it finds the answer.
 * Returns when it was answered by the store's clock.
 */
export async function keepAnswer(store: DurableStore, questionKey: string, data: unknown, windowMs: number, phone?: string): Promise<number> {
	const key = answerKey(questionKey);
	return await store.update([key], ([old], now) => {
		const keepUntil = Math.max(now + windowMs, keptUntil(old));
		const write: StoreWrite = { key, value: JSON.stringify({ answeredAt: now, keepUntil, data }), ttlMs: keepUntil - now };
		return { writes: [phone === undefined ? write : { ...write, phone }], result: now };
	});
}

/**
 * Take kept answers: the answers under these keys younger than each key's window, checked against
 * the schema again (the store may hold what an older version of the package kept). A store that
 * fails costs the reuse, never the run: the hint says so and every key is asked again.
 */
export async function takeKeptAnswers<Answer>(hints: StoreHints, schema: z.ZodType<Answer>, windows: Map<string, number>, asked: string): Promise<Map<string, { answer: Answer; answeredAt: number }>> {
	const taken = new Map<string, { answer: Answer; answeredAt: number }>();
	if (windows.size === 0) return taken;
	const found = await hints.attempt('Reuse Answers For', `the ${asked} were asked again`, async (store) => await readKeptAnswers(store, windows));
	for (const [key, { data, answeredAt }] of found ?? []) {
		const parsed = parseAnswer(schema, data);
		if (parsed.success) taken.set(key, { answer: parsed.data, answeredAt });
	}
	return taken;
}

/** Keep an answer for later executions; when it was answered, or undefined when the store failed (the hint says so). */
export async function keepForLater(hints: StoreHints, key: string, data: unknown, windowMs: number, what: string, phone?: string): Promise<number | undefined> {
	return await hints.attempt('Reuse Answers For', `${what} was not kept for later runs`, async (store) => await keepAnswer(store, key, data, windowMs, phone));
}

/** The fields an item gets with Reuse Answers For: whether its answer came from an earlier execution, and when the gateway gave it. */
export function reuseFields(reused: boolean, answeredAt: number | undefined): IDataObject {
	return { reused, answeredAt: answeredAt === undefined ? null : chinaIso(answeredAt) };
}
