/**
 * What a node run met that its output items do not show, noted where it happens and counted for
 * Usage → Get at the run's end (usage/runUsage.ts): calls refused before they were made, and SMS
 * items a guard did not send. Keyed by the run's context object, so it ends with the run.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

export interface RunNotes {
	/** By what refused: cap, day, month (money/ledger.ts LimitName), quota (the telephone quota). */
	refused: Record<string, number>;
	/** By the guard's reason (optedOut, outsideWindow): new reasons are counted as they come. */
	skipped: Record<string, number>;
}

const notes = new WeakMap<IExecuteFunctions, RunNotes>();

function notesOf(ctx: IExecuteFunctions): RunNotes {
	let found = notes.get(ctx);
	if (!found) notes.set(ctx, (found = { refused: {}, skipped: {} }));
	return found;
}

/** `count` calls (or a node's calls, as one) refused by `reason` before they were made. */
export function noteRefused(ctx: IExecuteFunctions, reason: string, count = 1): void {
	const refused = notesOf(ctx).refused;
	refused[reason] = (refused[reason] ?? 0) + count;
}

/** `count` SMS items a guard did not send, for `reason`. */
export function noteSkipped(ctx: IExecuteFunctions, reason: string, count = 1): void {
	if (count <= 0) return;
	const skipped = notesOf(ctx).skipped;
	skipped[reason] = (skipped[reason] ?? 0) + count;
}

/** What the run noted; empty when nothing. */
export function runNotes(ctx: IExecuteFunctions): RunNotes {
	return notes.get(ctx) ?? { refused: {}, skipped: {} };
}
