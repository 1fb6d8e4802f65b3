/**
 * `BENCH_ONLY=instructions npm run bench`: section 4 as instruction counts, for a machine too busy
 * for CPU time to mean much. Each variant (the Telephone node, n8n's engine alone, the bare undici
 * loop) runs in a child under valgrind's callgrind twice, with 200 and 2,200 items after the same
 * warm-up; the difference over 2,000 items is the count per item, free of start-up. Slow (a few
 * minutes per child), so never part of the full run. The child is bench/instructionsChild.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from '../scripts/n8n-runtime';
import type { EmulatorProcess } from './gateway';

const COUNTS = [200, 2200] as const;
const KINDS = ['telephone', 'engineOnly', 'bare'] as const;

function bundleChild(): string {
	const bundle = join(REPO_ROOT, 'bench', '.build', 'instructionsChild.cjs');
	const esbuild = spawnSync(
		join(REPO_ROOT, 'node_modules', '.bin', 'esbuild'),
		[join(REPO_ROOT, 'bench', 'instructionsChild.ts'), '--bundle', '--platform=node', '--format=cjs', `--outfile=${bundle}`, ...['n8n-core', 'n8n-workflow', 'undici', 'zod'].map((name) => `--external:${name}`), '--log-level=warning'],
		{ stdio: 'inherit' },
	);
	if (esbuild.status !== 0) throw new Error('bundling bench/instructionsChild.ts failed');
	return bundle;
}

/** Instructions the child executed in all its threads (JIT compilers and GC helpers included). */
function instructions(bundle: string, emulator: EmulatorProcess, kind: string, count: number): number {
	const folder = mkdtempSync(join(tmpdir(), 'bench-callgrind-'));
	try {
		const out = join(folder, 'callgrind.out');
		const child = spawnSync(
			'valgrind',
			['--tool=callgrind', `--callgrind-out-file=${out}`, '--cache-sim=no', '--dump-instr=no', process.execPath, bundle, emulator.url, emulator.demo.memberAppCode, kind, String(count)],
			{ encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
		);
		if (child.status !== 0) throw new Error(`valgrind ${kind} ${count} failed: ${child.stderr.slice(-2000)}`);
		const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'));
		if (!totals) throw new Error(`no instruction total in the callgrind output of ${kind} ${count}`);
		return Number(totals[1]);
	} finally {
		rmSync(folder, { recursive: true, force: true });
	}
}

export async function instructionCounts(emulator: EmulatorProcess): Promise<string> {
	if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed');
	const bundle = bundleChild();
	await emulator.reset();
	await emulator.setFaults({});
	const perItem: Record<string, number> = {};
	for (const kind of KINDS) {
		const [few, many] = COUNTS.map((count) => instructions(bundle, emulator, kind, count));
		perItem[kind] = (many - few) / (COUNTS[1] - COUNTS[0]);
		console.log(`${kind}: ${few} and ${many} instructions, ${Math.round(perItem[kind])} per item`);
	}
	const own = perItem.telephone - perItem.engineOnly;
	return `instructions per item (callgrind, ${process.version}): node ${(perItem.telephone / 1e6).toFixed(3)} M, n8n's engine alone ${(perItem.engineOnly / 1e6).toFixed(3)} M, bare undici loop ${(perItem.bare / 1e6).toFixed(3)} M; node's own part ${(own / 1e6).toFixed(3)} M = ${(own / perItem.bare).toFixed(2)} × bare (target ≤ 1.5 ×)`;
}
