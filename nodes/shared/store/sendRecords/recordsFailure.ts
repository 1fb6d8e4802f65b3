/** The records could not be written or read; `kept` says what stays in the store, if anything. */
export class RecordsFailure extends Error {
	constructor(
		readonly store: string,
		readonly reason: string,
		/**
		 * The items whose records may stay in the store: reserved (another execution takes them over);
		 * unknown (their message went out or may have); notStarted (no message went out, but a lost or
		 * failed answer may have left them recorded as started: this process takes them back, owedReleases.ts).
		 */
		readonly kept: { reserved: number[]; unknown: number[]; notStarted: number[] },
		/** The release that failed certainly wrote nothing (the store refused it): the reservations `kept` names are there, not maybe. */
		readonly certain = false,
	) {
		super(reason);
		this.name = 'RecordsFailure';
	}
}

/** What stays in the store after a failure, named in the node's error. */
export const recordsFailure = (store: string, reason: string, kept: Partial<RecordsFailure['kept']>, certain = false) =>
	new RecordsFailure(store, reason, { reserved: kept.reserved ?? [], unknown: kept.unknown ?? [], notStarted: kept.notStarted ?? [] }, certain);

export const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Failures of updates whose writes reached the store and whose answer was lost or garbled: they
 * may have been applied, as a paid call whose answer was lost may have gone out.
 */
const maybeApplied = new WeakSet<Error>();

export function markMaybeApplied(failure: Error): void {
	maybeApplied.add(failure);
}

export const mayHaveApplied = (error: unknown) => error instanceof Error && maybeApplied.has(error);
