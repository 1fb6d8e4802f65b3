import { noteBudget } from '../../../../shared/money/bill';
import { RecordsFailure } from '../../../../shared/store/sendRecords/sendRecords';
import { keptRecordsText, stoppedBatchError, unmarkedText, withUnreleased } from '../../sendErrors';
import type { SendRun } from './sendRun';

/** How the sends of a node run ended: the output items, or the error that stopped the batch. */
export type Settled<T> = { result: T } | { error: unknown };

/** Waits for `batch` and tells its end without throwing, for finishSends. */
export async function settle<T>(batch: Promise<T>): Promise<Settled<T>> {
	return await batch.then(
		(result) => ({ result }),
		(error: unknown) => ({ error }),
	);
}

/**
 * The last step of a run of sends: marks what was sent, releases what never started, records the
 * task IDs for delivery reports, and names in the error (or the run's hints) what a failure left
 * behind. Returns the batch's result, or throws its error so described.
 */
export async function finishSends<T>(run: SendRun, settled: Settled<T>): Promise<T> {
	const { ctx, records, outcomes } = run;
	const window = records.repeatWindowMinutes;
	try {
		const unmarked = await records.markSent(outcomes.sentByThisTry());
		if (unmarked) ctx.addExecutionHints?.({ message: unmarkedText(unmarked), location: 'outputPane' });
		const released = await records.releaseUnstarted().then(
			() => undefined,
			(error: unknown) => (error instanceof RecordsFailure ? error : new RecordsFailure(records.store.label, String(error), { reserved: records.holding(), unknown: [], notStarted: [] })),
		);
		if ('error' in settled) {
			const described = stoppedBatchError(settled.error, outcomes.sentItems(), outcomes.unknownItems(), window);
			throw released ? withUnreleased(described, released, window) : described;
		}
		if (released) ctx.addExecutionHints?.({ message: keptRecordsText(released, window), location: 'outputPane' });
		return settled.result;
	} finally {
		// What the cap and budgets reserved for sends that did not go out is given back.
		noteBudget(ctx, await run.meter.settle());
		await run.deliveries.finish();
	}
}
