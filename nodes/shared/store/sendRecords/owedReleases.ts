import { registerProcessState } from '../../state/processState';

/**
 * Releases this process still owes a store: sends whose paid call certainly failed or never
 * started, whose records a lost or failed store answer may have left (reserved, or "outcome
 * unknown" by a claim whose answer was lost). No message went out for them, so they are taken
 * back once the store answers again: at the end of the run that owes them, before the next
 * reservation on that store in this process, and by a timer meanwhile (after 1 s, then twice as
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
const timers = new Map<string, NodeJS.Timeout>();

/** Notes that `debtor` owes releases to the store named `store`, until `untilMs` (when its records expire anyway). */
export function oweRelease(store: string, debtor: OwedRelease, untilMs: number): void {
	const debtors = owed.get(store) ?? new Map<OwedRelease, number>();
	owed.set(store, debtors);
	debtors.delete(debtor);
	debtors.set(debtor, untilMs);
	if (debtors.size > MOST_PER_STORE) debtors.delete(debtors.keys().next().value as OwedRelease);
	if (!timers.has(store)) retryLater(store, FIRST_RETRY_MS);
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

function retryLater(store: string, delayMs: number): void {
	const timer = setTimeout(() => {
		void payOwedReleases(store).finally(() => {
			if (timers.get(store) !== timer) return;
			timers.delete(store);
			if (owed.has(store)) retryLater(store, Math.min(delayMs * 2, LAST_RETRY_MS));
		});
	}, delayMs);
	// Never the reason a process stays alive.
	timer.unref();
	timers.set(store, timer);
}

function forget(store: string): void {
	owed.delete(store);
	clearTimeout(timers.get(store));
	timers.delete(store);
}

registerProcessState('owedReleases', () => {
	for (const store of [...owed.keys()]) forget(store);
});
