/**
 * The clock of the stores that live on this host (process memory, the SQLite file): Date.now.
 * Tests set it to a fixed instant so that calendar windows are deterministic; Redis keeps its own
 * clock (TIME), one for every process that shares it.
 */
export const hostClock = { now: (): number => Date.now() };
