import { sleep } from 'n8n-workflow';

/** Synchronous store work (SQLite calls, hashing keys) done between two turns of the event loop, at most. */
const SHARE_MS = 8;

let runningSince: number | undefined;
let turnSeen: Promise<void> | undefined;

/**
 * Whether store work may run now, asked right before it (with no await in between):
 * `while (!mayWorkNow()) await nextTurn();`. A batch that starts hundreds of store calls at once
 * would otherwise run them all in one go (SQLite's calls are synchronous) and hold n8n's event loop
 * for their whole time; once the work since the last turn has run for SHARE_MS, the rest waits.
 */
export function mayWorkNow(): boolean {
	const now = Date.now();
	if (runningSince === undefined) {
		runningSince = now;
		void nextTurn().then(() => {
			runningSince = undefined;
		});
		return true;
	}
	return now - runningSince < SHARE_MS;
}

/** Resolves once the event loop has turned (a timer has run). */
export function nextTurn(): Promise<void> {
	turnSeen ??= sleep(0).then(() => {
		turnSeen = undefined;
	});
	return turnSeen;
}
