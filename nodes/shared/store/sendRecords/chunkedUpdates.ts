import type { ItemKeys } from './decisions';
import { keysOfItems } from './itemKeys';
import { mayHaveApplied } from './recordsFailure';

/** Items per store update: one atomic decision each, small enough for one Redis script. */
export const ITEMS_PER_UPDATE = 50;
/** Updates of one step (reserve, mark sent, release) in flight at once: their round trips overlap on Redis. */
const CHUNKS_AT_ONCE = 8;

/**
 * The items' updates, ITEMS_PER_UPDATE items each, in item order: up to CHUNKS_AT_ONCE at once
 * while their keys are apart (a shared key, such as a number's counts, waits for the updates
 * before it), so that Redis's round trips overlap. When one fails, the rest already started end
 * before it is thrown (the caller then releases what they took); none starts after it.
 */
export async function chunkedUpdates<T>(items: ItemKeys[], counts: boolean, update: (chunk: ItemKeys[]) => Promise<T[]>, touched?: Set<ItemKeys>): Promise<T[]> {
	const results: T[][] = [];
	let running: Array<Promise<unknown>> = [];
	let keysInFlight = new Set<string>();
	const settle = async () => {
		const failed = (await Promise.allSettled(running)).find((outcome) => outcome.status === 'rejected');
		running = [];
		keysInFlight = new Set();
		if (failed) throw (failed as PromiseRejectedResult).reason;
	};
	for (let start = 0, index = 0; start < items.length; start += ITEMS_PER_UPDATE, index++) {
		const chunk = items.slice(start, start + ITEMS_PER_UPDATE);
		const keys = keysOfItems(chunk, counts);
		if (running.length >= CHUNKS_AT_ONCE || keys.some((key) => keysInFlight.has(key))) await settle();
		for (const key of keys) keysInFlight.add(key);
		// `touched`: the items whose update was applied, or may have been (its answer lost).
		const touch = () => chunk.forEach((item) => touched?.add(item));
		running.push(
			update(chunk).then(
				(answers) => (touch(), (results[index] = answers)),
				(error: unknown) => (mayHaveApplied(error) && touch(), Promise.reject(error)),
			),
		);
	}
	await settle();
	return results.flat();
}
