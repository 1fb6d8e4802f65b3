import assert from 'node:assert/strict';

/**
 * The run `n8n execute --rawOutput` prints: pretty JSON from a line "{" (or "[") to the matching
 * closing line at column 0. n8n may log more after it, so the text is cut there, not at the end.
 */
export function parsePrintedRun<T = unknown>(stdout: string): T {
	const start = stdout.search(/^[[{]\s*$/m);
	assert.ok(start >= 0, `no JSON in n8n execute output:\n${stdout.slice(-2000)}`);
	const closing = stdout[start] === '[' ? '\n]' : '\n}';
	const end = stdout.indexOf(closing, start);
	assert.ok(end >= 0, `the printed run never ends:\n${stdout.slice(-2000)}`);
	return JSON.parse(stdout.slice(start, end + closing.length)) as T;
}
