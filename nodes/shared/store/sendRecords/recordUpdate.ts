import { sleep } from 'n8n-workflow';

import { StoreUnavailable, type DurableStore } from '../durableStore';
import type { ItemKeys } from './decisions';
import { keysOfItems, phonesOfItems } from './itemKeys';
import type { KnownValues } from './knownValues';
import { markMaybeApplied, reasonOf } from './recordsFailure';
import { StagedValues, UnnamedKey } from './recordValues';

/** Tries of one store update; each decision is safe to run again (see decisions.ts). */
const TRIES = 3;
/**
 * The pause before each further try: a lost connection is seen closed only on a later turn of the
 * event loop, so a try at once would fail on it again (and the next call reconnects only then).
 */
const PAUSE_BEFORE_TRY_MS = [0, 20, 200];

const RESULT = 'send-records';

/**
 * One atomic update over the items' keys (and `more` keys a claim's gate reads), tried again when
 * it fails; the answer is checked. `known` (Redis only) saves a read of what this run's updates
 * left; without `counts` the items' count keys are not named. Answers each item's decision, in order.
 */
export async function updateRecords<T>(
	store: DurableStore,
	known: KnownValues | undefined,
	items: ItemKeys[],
	decide: (values: StagedValues, item: ItemKeys) => T,
	counts: boolean,
	more: string[] = [],
): Promise<T[]> {
	const keys = [...new Set([...keysOfItems(items, counts), ...more])];
	const phones = phonesOfItems(items);
	let failure: unknown;
	let mayHaveWritten = false;
	for (let attempt = 0; attempt < TRIES; attempt++) {
		let staged: StagedValues | undefined;
		let decided = false;
		if (PAUSE_BEFORE_TRY_MS[attempt] > 0) await sleep(PAUSE_BEFORE_TRY_MS[attempt]);
		try {
			const answer: unknown = await store.update(
				keys,
				(read, now) => {
					decided = false;
					const values = (staged = new StagedValues(keys, read, now, phones));
					const results = items.map((item) => decide(values, item));
					decided = true;
					return { writes: values.writes(), result: { kind: RESULT, results } };
				},
				known?.guess(keys),
			);
			const { kind, results } = (answer ?? {}) as { kind?: unknown; results?: unknown };
			if (kind !== RESULT || !Array.isArray(results) || results.length !== items.length || !staged) throw new Error(`${store.label} answered an update with something unexpected`);
			// The last decision is the one the store applied.
			known?.remember(keys, staged);
			return results as T[];
		} catch (error) {
			known?.forget(keys);
			failure = error;
			// Unknown, like a paid call's lost answer: only a store that says so wrote nothing.
			if (decided && !(error instanceof StoreUnavailable && !error.maybeWritten)) mayHaveWritten = true;
			// Asking again would need the same key again: the caller names more keys instead.
			if (error instanceof UnnamedKey) break;
		}
	}
	const thrown = failure instanceof Error ? failure : new Error(reasonOf(failure));
	if (mayHaveWritten) markMaybeApplied(thrown);
	throw thrown;
}
