/** What section 9's parent (bench/records.ts) and each store's run (bench/recordsRun.ts) share. */
export const RECORDS_SENDS = 20_000;
export const RECORDS_BATCH = 500;
export const RECORDS_WARM_UP = 100;

export type RecordsStore = 'SQLite' | 'Redis' | 'memory';

export interface RecordsChildInput {
	store: RecordsStore;
	emulatorUrl: string;
	demo: { appCode: string; memberAppCode: string; signatureId: string; templateId: string };
	redisUrl?: string;
}

export interface StoreRun {
	store: RecordsStore;
	/** The kind of store the records really used (DurableStore.kind), checked against `store`. */
	storeKind: string;
	node: string;
	/** Time the records were at work, ÷ the execution's sends: median of the first three executions. */
	firstMsPerSend: number;
	/** The same, median of the last three. */
	lastMsPerSend: number;
	/** The whole execution's wall time ÷ its sends (engine, checks, HTTP, records), first and last three. */
	firstWallMsPerSend: number;
	lastWallMsPerSend: number;
	/** The longest synchronous step of the store (it holds the event loop), in the last three executions: wall and main-thread CPU time. */
	lastStoreStep: { wallMs: number; cpuMs: number };
	/** The same over all executions. */
	runStoreStep: { wallMs: number; cpuMs: number };
	/** Longest event-loop delay of the whole process (engine, checks, HTTP, records), in the last three executions. */
	lastProcessBlockMs: number;
	bytesPerNumber: number;
	/** CPU time of the whole run's process (main thread and helpers) over the 40 executions, ÷ the sends. */
	processCpuMsPerSend: number;
	/** For Redis, the redis-server's CPU time over the same span, ÷ the sends (0 for the other stores). */
	serverCpuMsPerSend: number;
	/** The send records' store updates over the 40 executions, ÷ the sends. */
	updatesPerSend: number;
	/** For Redis, the commands its store sent (TIME, MGET, the compare-and-set script), ÷ the sends. */
	redisCommandsPerSend: number;
	sends: number;
	failedItems: number;
	totalSeconds: number;
	/** The machine's 1-minute load average as the run started and ended (set by bench/records.ts). */
	loadAverage?: [number, number];
}
