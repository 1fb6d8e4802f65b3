/** A wait in words: "0.3 s", "4.5 min", "23.1 days"; rounded up, so that it never reads shorter than it is. */
function describeWait(ms: number): string {
	const units: Array<[number, string]> = [
		[86_400_000, 'days'],
		[3_600_000, 'h'],
		[60_000, 'min'],
	];
	for (const [size, unit] of units) if (ms >= 2 * size) return `${Math.ceil((ms / size) * 10) / 10} ${unit}`;
	return `${Math.ceil(ms / 100) / 10} s`;
}

/**
 * Thrown by `acquire` when the start would come after the caller's deadline (it does not wait in
 * vain), or when no concurrency slot came free by then.
 */
export class LimiterWaitTooLong extends Error {
	constructor(
		/** The wait still ahead; undefined when it is not known (a slot did not come free). */
		readonly waitMs: number | undefined,
		/** The wait was booked in the shared Redis (limits/sharedRate.ts) rather than in this process. */
		readonly shared = false,
		maxConcurrent = 0,
		/** What was left of the caller's wait (to its deadline) when the wait ahead was found longer. */
		readonly leftMs?: number,
	) {
		super(
			waitMs === undefined
				? `${maxConcurrent === 1 ? 'the one call allowed at a time' : `all ${maxConcurrent} calls allowed at once`} with this credential stayed busy`
				: `calls with this credential are held back for another ${describeWait(waitMs)}${shared ? ' by the rate shared through Redis' : ''}`,
		);
		this.name = 'LimiterWaitTooLong';
	}
}
