/**
 * Section 10 (issue 27): Reuse Answers For. 1,000 violation queries run twice with the option on,
 * each round on a fresh SQLite store file (the store n8n 2.x gives a node without Redis); the
 * second run must make 0 calls and take at most 10 % of the first run's node time.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { EmulatorProcess } from './gateway';
import { plates } from './inputs';
import { runLookups, type LookupRun } from './lookups';
import { figureRow, type Figure } from './figure';

const LOOKUPS = 1000;
const LATENCY_MS = 50;
const ROUNDS = 3;
const LIMIT = 0.1;
const REUSE = { reuseAnswersHours: 24 };

export const REUSE_START = '<!-- reuse -->';
export const REUSE_END = '<!-- /reuse -->';

interface Round {
	first: LookupRun;
	second: LookupRun;
	firstCalls: number;
	secondCalls: number;
	reused: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function reuseBench(emulator: EmulatorProcess): Promise<Figure> {
	const folder = mkdtempSync(join(tmpdir(), 'dgw-bench-reuse-'));
	const credentials = { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxConcurrent: 10 };
	const calls = async () => (await emulator.ledger()).totals.calls;
	// A store file per round: the bench process opens one store per file (store/openStore.ts).
	const freshStore = (name: string) => (process.env.DATA_GATEWAY_STORE_FILE = join(folder, `${name}.sqlite`));
	try {
		await emulator.reset();
		await emulator.setFaults({ latencyMs: LATENCY_MS });
		// A warm-up of both paths: a process's first run also compiles n8n's engine and the package.
		freshStore('warm-up');
		const warmUp = plates(LOOKUPS + 100).slice(LOOKUPS);
		await runLookups('violations', warmUp, credentials, REUSE);
		await runLookups('violations', warmUp, credentials, REUSE);
		const rounds: Round[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			const file = freshStore(`round-${round}`);
			const before = await calls();
			const first = await runLookups('violations', plates(LOOKUPS), credentials, REUSE);
			// On a Node without node:sqlite the store would be process memory, not what this section measures.
			if (!existsSync(file)) throw new Error(`the answers were not kept in the SQLite file ${file}: run the benchmark on Node 22.13 or later`);
			const between = await calls();
			const second = await runLookups('violations', plates(LOOKUPS), credentials, REUSE);
			const reused = second.items.filter((item) => item.reused === true).length;
			rounds.push({ first, second, firstCalls: between - before, secondCalls: (await calls()) - between, reused });
		}
		const ratios = rounds.map((round) => round.second.nodeMs / round.first.nodeMs);
		const ratio = median(ratios);
		const failed = rounds.reduce((sum, round) => sum + round.first.failedItems + round.second.failedItems, 0);
		const secondCalls = rounds.reduce((sum, round) => sum + round.secondCalls, 0);
		const allReused = rounds.every((round) => round.reused === LOOKUPS);
		const each = rounds.map((round) => `${Math.round(round.first.nodeMs)} ms (${round.firstCalls} calls) → ${Math.round(round.second.nodeMs)} ms (${round.secondCalls} calls, ${round.reused} reused)`);
		return {
			name: `10. Reuse Answers For: ${LOOKUPS.toLocaleString('en')} violation queries run twice, ${LATENCY_MS} ms latency, concurrency 10, SQLite store (median of ${ROUNDS} rounds)`,
			measured: `node time, first run → second run: ${each.join('; ')}; ${failed} failed`,
			target: `second run 0 calls, every answer reused, node time ≤ ${LIMIT * 100} % of the first`,
			ratio,
			limit: LIMIT,
			pass: ratio <= LIMIT && secondCalls === 0 && allReused && failed === 0,
			note: `${(ratio * 100).toFixed(1)} % of the first (rounds ${ratios.map((value) => `${(value * 100).toFixed(1)} %`).join(', ')})`,
		};
	} finally {
		await emulator.setFaults({});
		delete process.env.DATA_GATEWAY_STORE_FILE;
		rmSync(folder, { recursive: true, force: true });
	}
}

export function reuseSection(figure: Figure, stamp: string): string {
	return `${REUSE_START}
## 10. Reuse Answers For across executions (${stamp})

Through n8n-core's WorkflowExecute with the built package; each round on a fresh SQLite store file. Node time is the Vehicle node's execution time as n8n records it; calls are the emulator's ledger. Each section starts without the limiters earlier ones left (as a restart would), so the figure inside the full run should match this section run alone (\`BENCH_ONLY=reuse\`) within 1.10 ×; the latest comparison is in the notes below (10. Reuse Answers For).

| measurement | measured | target | result |
| --- | --- | --- | --- |
${figureRow(figure)}
${REUSE_END}`;
}
