import { keptRecordsText } from '../../../../shared/store/sendRecords/open';
import { RecordsFailure } from '../../../../shared/store/sendRecords/sendRecords';
import type { SendRun } from './run';

const byItem = <T>(entries: Map<number, T>) => [...entries].sort(([a], [b]) => a - b);

/** What one try of the node sent, or left with an unknown outcome: named by the error that stops the batch. */
export class BatchOutcomes {
	private readonly sent = new Map<number, string>();
	private readonly sentNow = new Map<number, string | null>();
	private readonly unknown = new Map<number, string>();

	constructor(private readonly repeatWindowMinutes: number) {}

	/** `fresh`: sent by this try (not found from an earlier one), so its record is marked sent. */
	sentItem(itemIndex: number, taskId: string | null, fresh: boolean): void {
		this.sent.set(itemIndex, taskId ?? 'without a task ID');
		if (fresh) this.sentNow.set(itemIndex, taskId);
	}

	unknownItem(itemIndex: number, phone: string): void {
		this.unknown.set(itemIndex, phone);
	}

	/** Items this try sent, with their task IDs. */
	sentByThisTry(): Map<number, string | null> {
		return this.sentNow;
	}

	/**
	 * The error that stopped the batch, naming the items already sent and every item whose outcome
	 * is unknown: their records stay, so a retried execution sends only the rest.
	 */
	describe(error: unknown): unknown {
		if (!(error instanceof Error) || (this.sent.size === 0 && this.unknown.size === 0)) return error;
		const retried = this.repeatWindowMinutes > 0 ? 'not sent again when the execution is retried' : 'a retried execution sends them again, as the repeat window is 0';
		const notes: string[] = [];
		if (this.sent.size > 0) {
			notes.push(`[already sent, and ${retried}: ${byItem(this.sent).map(([itemIndex, taskId]) => `item ${itemIndex + 1} (task ${taskId})`).join(', ')}]`);
		}
		if (this.unknown.size > 0) {
			const items = byItem(this.unknown).map(([itemIndex, phone]) => `item ${itemIndex + 1} (${phone})`);
			notes.push(`[outcome unknown, may have been sent; they stay recorded, so ${retried.replace('them', 'these')}: ${items.join(', ')}]`);
		}
		error.message = `${error.message} ${notes.join(' ')}`;
		return error;
	}
}

/** Adds to the error what a failed release left in the store. */
function withKeptRecords(error: unknown, failure: RecordsFailure, repeatWindowMinutes: number): unknown {
	if (!(error instanceof Error)) return error;
	const kept = `The records of the items not started could not be released (${failure.reason}). ${keptRecordsText(failure, repeatWindowMinutes)}`;
	const withDescription = error as Error & { description?: string };
	withDescription.description = withDescription.description ? `${withDescription.description} ${kept}` : kept;
	return error;
}

/**
 * Runs the sends of one node run, then records what was sent, releases what never started and
 * names what a failure left behind.
 */
export async function runSends<T>(run: SendRun, batch: () => Promise<T>): Promise<T> {
	const outcome = await batch().then(
		(result) => ({ result }),
		(error: unknown) => ({ error }),
	);
	const unmarked = await run.records.markSent(run.outcomes.sentByThisTry());
	if (unmarked) {
		const items = unmarked.kept.unknown.map((itemIndex) => itemIndex + 1).join(', ');
		run.ctx.addExecutionHints?.({
			message: `Items ${items} were sent, but ${unmarked.store} could not record it (${unmarked.reason}): their records stay "outcome unknown", so no execution sends them again within the repeat window, and a re-run of this execution reports them as unknown instead of handing back their task IDs.`,
			location: 'outputPane',
		});
	}
	const released = await run.records.releaseUnstarted().then(
		() => undefined,
		(error: unknown) => (error instanceof RecordsFailure ? error : new RecordsFailure(run.records.store.label, String(error), { reserved: run.records.holding(), unknown: [] })),
	);
	if ('error' in outcome) {
		const described = run.outcomes.describe(outcome.error);
		throw released ? withKeptRecords(described, released, run.repeatWindowMinutes) : described;
	}
	if (released) run.ctx.addExecutionHints?.({ message: keptRecordsText(released, run.repeatWindowMinutes), location: 'outputPane' });
	return outcome.result;
}
