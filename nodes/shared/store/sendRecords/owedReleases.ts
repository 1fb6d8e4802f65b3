import { registerProcessState } from '../../state/processState';
import { startSweep } from '../../state/sweep';

/**
 * Releases this process still owes a store: sends whose paid call certainly failed or never
 * started, whose records a lost or failed store answer may have left (reserved, or "outcome
 * unknown" by a claim whose answer was lost). No message went out for them, so they are taken
 * back once the store answers again: at the end of the run that owes them, before the next
 * reservation on that store in this process, and by a sweep meanwhile (after 1 s, then twice as
 * long each time up to 5 minutes). Process memory: a restart forgets them (the item's error says
 * what that means).
 */
export interface OwedRelease {
	/** Releases what is owed; true once nothing is owed any more. */
	takeBack(): Promise<boolean>;
}

/** At most this many debtors are kept per store; the oldest go first (their records expire on their own). */
const MOST_PER_STORE = 1_000;
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 5 * 60_000;

const owed = new Map<string, Map<OwedRelease, number>>();
/** When each store is tried next by the sweep, and the wait after that. */
const retries = new Map<string, { atMs: number; waitMs: number }>();
let sweep: { stop(): void } | undefined;

/** Notes that `debtor` owes releases to the store named `store`, until `untilMs` (when its records expire anyway). */
export function oweRelease(store: string, debtor: OwedRelease, untilMs: number): void {
	const debtors = owed.get(store) ?? new Map<OwedRelease, number>();
	owed.set(store, debtors);
	debtors.delete(debtor);
	debtors.set(debtor, untilMs);
	if (debtors.size > MOST_PER_STORE) debtors.delete(debtors.keys().next().value as OwedRelease);
	// A new debt starts the waits again: the store may have answered the run that owes it until just now.
	retries.set(store, { atMs: Date.now() + FIRST_RETRY_MS, waitMs: FIRST_RETRY_MS });
	sweep ??= startSweep(retryDue, FIRST_RETRY_MS);
}

/** Pays what is owed to the store named `store`; what still fails stays owed. Costs nothing when nothing is owed. */
export async function payOwedReleases(store: string): Promise<void> {
	const debtors = owed.get(store);
	if (!debtors) return;
	for (const [debtor, untilMs] of [...debtors]) {
		if (untilMs <= Date.now() || (await debtor.takeBack())) debtors.delete(debtor);
	}
	if (debtors.size === 0 && owed.get(store) === debtors) forget(store);
}

/** Forgets a debtor that has paid by itself. */
export function paidRelease(store: string, debtor: OwedRelease): void {
	const debtors = owed.get(store);
	debtors?.delete(debtor);
	if (debtors?.size === 0) forget(store);
}

/** The sweep's tick: the stores whose retry is due are tried; one still failing waits twice as long. */
function retryDue(): void {
	for (const [store, retry] of retries) {
		if (retry.atMs > Date.now()) continue;
		const waitMs = Math.min(retry.waitMs * 2, LAST_RETRY_MS);
		retries.set(store, { atMs: Number.POSITIVE_INFINITY, waitMs });
		void payOwedReleases(store).finally(() => {
			const now = retries.get(store);
			if (now) now.atMs = Date.now() + waitMs;
		});
	}
}

function forget(store: string): void {
	owed.delete(store);
	retries.delete(store);
	if (retries.size === 0) {
		sweep?.stop();
		sweep = undefined;
	}
}

registerProcessState('owedReleases', () => {
	for (const store of [...owed.keys()]) forget(store);
});
