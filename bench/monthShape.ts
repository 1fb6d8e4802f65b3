/** What section 11's parent (bench/month.ts) and its run (bench/monthRun.ts) share. */
export const MONTH_DAYS = 30;
export const MONTH_SENDS = 2_000;
/** The day's sends in executions of this many. */
export const MONTH_SEND_BATCH = 500;
export const MONTH_LOOKUPS = 5_000;
export const MONTH_CHECKS = 500;
/** Numbers put on the opt-out list before day 1; a fifth of each day's checks are among them. */
export const MONTH_OPTED_OUT = 200;

export interface MonthChildInput {
	emulatorUrl: string;
	demo: { appCode: string; memberAppCode: string; signatureId: string; templateId: string };
	days: number;
}

/**
 * The longest synchronous slice of the sweep: wall time; of it this thread's time on a CPU, and its
 * time waiting for one (runnable, while other processes ran: /proc's schedstat); the rest it was blocked (disk, lock).
 */
export interface SweepSlice {
	wallMs: number;
	cpuMs: number;
	queuedMs: number;
}

/** A slice's own time: its wall time but its wait for a CPU while other processes ran. */
export const ownMs = (slice: SweepSlice) => slice.wallMs - slice.queuedMs;

export interface MonthDay {
	day: number;
	/** The SQLite file with its WAL after the day's job, in bytes; and the file alone. */
	bytesAfterJob: number;
	fileBytesAfterJob: number;
	/** The Send node's time per send: median of the day's executions (n8n's executionTime ÷ sends). */
	msPerSend: number;
	/** The run process's CPU time over the day's Send executions ÷ sends (the emulator runs elsewhere). */
	cpuMsPerSend: number;
	sent: number;
	/** Lookups the gateway was paid for, answers reused from the store, items failed (all nodes). */
	paidLookups: number;
	reused: number;
	failed: number;
	optedOutFound: number;
	/** The SQLite file with its WAL after the night's pass (which empties the WAL when it removed rows). */
	bytesAfterNight: number;
	/** The night's pass (next day 10:00, what expired since 14:00): rows removed, its time, its longest synchronous slice, the longest event-loop delay during it. */
	nightRows: number;
	nightMs: number;
	nightSlice: SweepSlice;
	nightDelayMs: number;
	/** Over all the day's passes (those between the job's parts and the night's): rows removed, longest slice, longest event-loop delay. */
	passRows: number;
	passSlice: SweepSlice;
	/** The slice of the longest own time (wall time but the wait for a CPU). */
	passOwnSlice: SweepSlice;
	passDelayMs: number;
	/** The longest synchronous slice of the store's own timer passes during the day (zero if none ran). */
	timerSlice: SweepSlice;
	timerOwnSlice: SweepSlice;
	/** The machine's 1-minute load average at the end of the day. */
	load: number;
}

export interface MonthRun {
	node: string;
	days: MonthDay[];
	totalSeconds: number;
}
