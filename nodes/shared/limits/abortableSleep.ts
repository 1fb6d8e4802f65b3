import { sleep } from 'n8n-workflow';

/** Waits `ms`, or rejects as soon as the execution is cancelled. */
export async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (ms <= 0) return;
	if (!signal) return await sleep(ms);
	if (signal.aborted) throw signal.reason ?? new Error('Cancelled');
	let onAbort: (() => void) | undefined;
	const aborted = new Promise<never>((_, reject) => {
		onAbort = () => reject(signal.reason ?? new Error('Cancelled'));
		signal.addEventListener('abort', onAbort, { once: true });
	});
	try {
		await Promise.race([sleep(ms), aborted]);
	} finally {
		if (onAbort) signal.removeEventListener('abort', onAbort);
	}
}
