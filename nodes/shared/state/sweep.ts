/**
 * A periodic sweep that never keeps the process alive (unref'd): state that must be bounded in
 * time is cleaned even when no later call comes. The one place with a timer of its own.
 */
export function startSweep(sweep: () => void, everyMs: number): { stop(): void } {
	// eslint-disable-next-line @n8n/community-nodes/no-restricted-globals -- unref'd, so it never keeps n8n alive (scripts/n8n-accepted-findings.mjs)
	const timer = setInterval(sweep, everyMs);
	timer.unref?.();
	// eslint-disable-next-line @n8n/community-nodes/no-restricted-globals -- the timer started above
	return { stop: () => clearInterval(timer) };
}
