/**
 * `npm run bench`: throughput, rate-cap adaptation, a side-by-side with n8n's HTTP Request node
 * in real n8n, per-item overhead against a bare undici loop, and peak memory. Prints a table and
 * writes bench/results/REPORT.md with bench/results/chart.svg.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';

import { REPO_ROOT } from '../scripts/n8n-runtime';
import { phones, plates, startEmulatorProcess, type EmulatorProcess } from './gateway';
import { runLookups } from './lookups';
import { sideBySide, type SideBySideRow } from './sideBySide';

const RESULTS = join(REPO_ROOT, 'bench', 'results');

interface Figure {
	name: string;
	measured: string;
	target: string;
	ratio?: number;
	limit?: number;
	pass: boolean;
	note: string;
}

async function throughput(emulator: EmulatorProcess): Promise<Figure> {
	await emulator.reset();
	await emulator.setFaults({ latencyMs: 50 });
	const run = await runLookups('telephone', phones(1000), { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxConcurrent: 10 });
	const ideal = (1000 * 50) / 10;
	const ratio = run.ms / ideal;
	return {
		name: '1. 1,000 phone lookups, 50 ms latency, concurrency 10',
		measured: `${Math.round(run.ms)} ms, ${run.failedItems} failed`,
		target: `≤ 1.15 × ideal ${ideal} ms`,
		ratio,
		limit: 1.15,
		pass: ratio <= 1.15 && run.failedItems === 0,
		note: `${ratio.toFixed(2)} × ideal`,
	};
}

async function rateCap(emulator: EmulatorProcess): Promise<Figure> {
	await emulator.reset();
	await emulator.setFaults({ latencyMs: 50, rateCapPerSecond: 40 });
	const inputs = plates(400, 0.1);
	const distinct = new Set(inputs).size;
	const run = await runLookups('violations', inputs, { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url });
	const ledger = await emulator.ledger();
	const ideal = (distinct / 40) * 1000;
	const ratio = run.ms / ideal;
	const rejectedShare = ledger.totals.rejected429 / ledger.totals.calls;
	return {
		name: '2. 400 paid lookups (10% repeats) against a 40 req/s cap, default settings',
		measured: `${Math.round(run.ms)} ms, ${run.failedItems} failed, ${ledger.totals.billedCalls} billed of ${distinct} distinct, ${ledger.totals.rejected429} rejected of ${ledger.totals.calls} calls (${(rejectedShare * 100).toFixed(1)}%)`,
		target: `≤ 1.15 × ideal ${Math.round(ideal)} ms, 0 failed, billed = distinct, rejected ≤ 10%`,
		ratio,
		limit: 1.15,
		pass: ratio <= 1.15 && run.failedItems === 0 && ledger.totals.billedCalls === distinct && rejectedShare <= 0.1,
		note: `${ratio.toFixed(2)} × ideal`,
	};
}

async function overhead(emulator: EmulatorProcess): Promise<Figure> {
	await emulator.reset();
	await emulator.setFaults({});
	const count = 5000;
	const valid = phones(count);
	const node = await runLookups('telephone', valid, { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxConcurrent: 10 });

	const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
	const cpuBefore = process.cpuUsage();
	let next = 0;
	await Promise.all(
		Array.from({ length: 10 }, async () => {
			while (next < count) {
				const tel = valid[next++];
				const response = await request(`${emulator.url}/telecom/identify?tel=${tel}&appCode=${emulator.demo.memberAppCode}`, { dispatcher: agent });
				JSON.parse(await response.body.text());
			}
		}),
	);
	const bare = process.cpuUsage(cpuBefore);
	await agent.close();
	const bareMs = (bare.user + bare.system) / 1000;
	const engine = await runLookups('engineOnly', valid, {});
	const ratio = node.cpuMs / bareMs;
	const perItem = (ms: number) => `${((ms / count) * 1000).toFixed(0)} µs/item`;
	return {
		name: '4. CPU per item, 5,000 lookups at 0 ms latency',
		measured: `node ${perItem(node.cpuMs)} (of which n8n's engine alone, reading the same expression per item: ${perItem(engine.cpuMs)}), bare undici loop ${perItem(bareMs)}; node minus engine = ${((node.cpuMs - engine.cpuMs) / bareMs).toFixed(2)} × bare`,
		target: '≤ 3 × the bare loop',
		ratio,
		limit: 3,
		pass: ratio <= 3 && node.failedItems === 0,
		note: `${ratio.toFixed(2)} × bare (the node's figure includes n8n's engine)`,
	};
}

function memory(emulator: EmulatorProcess): Figure {
	const child = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(REPO_ROOT, 'bench', 'memory.ts'), emulator.url, emulator.demo.memberAppCode, '10000'], {
		encoding: 'utf8',
		maxBuffer: 16 * 1024 * 1024,
	});
	if (child.status !== 0) throw new Error(`memory run failed: ${child.stderr}`);
	const result = JSON.parse(child.stdout.trim().split('\n').pop() as string) as { items: number; failedItems: number; maxRssMb: number; baselineMb: number };
	return {
		name: '5. Peak RSS, 10,000 items in one execution',
		measured: `${result.maxRssMb} MB (${result.items} items, ${result.failedItems} failed; ${result.baselineMb} MB with n8n-core and the package loaded, before the first item)`,
		target: '≤ 200 MB',
		ratio: result.maxRssMb / 200,
		limit: 1,
		pass: result.maxRssMb <= 200 && result.failedItems === 0,
		note: 'whole process: tsx, n8n-core and the workflow',
	};
}

function chart(figures: Figure[]): string {
	const rows = figures.filter((figure) => figure.ratio !== undefined);
	const width = 720;
	const rowHeight = 44;
	const scale = (value: number) => Math.min(1, value / 3.2) * 420;
	const bars = rows
		.map((figure, index) => {
			const y = 30 + index * rowHeight;
			const ratio = figure.ratio as number;
			const limitX = 260 + scale(figure.limit as number);
			return `<text x="10" y="${y + 18}" font-size="12">${figure.name.slice(0, 2)} ${figure.note.split(' ')[0]}</text>
<rect x="260" y="${y}" width="${scale(ratio).toFixed(1)}" height="24" fill="${figure.pass ? '#2da44e' : '#cf222e'}"/>
<line x1="${limitX}" y1="${y - 4}" x2="${limitX}" y2="${y + 28}" stroke="#24292f" stroke-dasharray="4 3"/>
<text x="${limitX + 4}" y="${y + 36}" font-size="10">target ${figure.limit}</text>`;
		})
		.join('\n');
	return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${40 + rows.length * rowHeight}" font-family="sans-serif">
<text x="10" y="18" font-size="13" font-weight="bold">Measured ÷ reference (green: within target, dashed: target)</text>
${bars}
</svg>
`;
}

function sideBySideTable(rows: SideBySideRow[]): string {
	return [
		'| variant | time (first to last call) | failed items | billed calls | rejected (429) / all calls |',
		'| --- | --- | --- | --- | --- |',
		...rows.map((row) => `| ${row.variant} | ${row.ms} ms | ${row.failedItems} | ${row.billedCalls} | ${row.rejected429} / ${row.calls} |`),
	].join('\n');
}

async function main() {
	const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
	if (build.status !== 0) process.exit(1);
	const started = Date.now();
	const emulator = await startEmulatorProcess();
	const figures: Figure[] = [];
	let sideRows: SideBySideRow[] = [];
	try {
		figures.push(await throughput(emulator));
		console.log(figures.at(-1));
		figures.push(await rateCap(emulator));
		console.log(figures.at(-1));
		sideRows = await sideBySide(emulator, plates(400, 0.1), 40);
		console.table(sideRows);
		figures.push(await overhead(emulator));
		console.log(figures.at(-1));
		figures.push(memory(emulator));
		console.log(figures.at(-1));
	} finally {
		await emulator.stop();
	}
	const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
	const date = new Date().toISOString().slice(0, 10);
	const table = [
		'| measurement | measured | target | result |',
		'| --- | --- | --- | --- |',
		...figures.map((figure) => `| ${figure.name} | ${figure.measured} | ${figure.target} | ${figure.pass ? 'met' : 'missed'} (${figure.note}) |`),
	].join('\n');
	mkdirSync(RESULTS, { recursive: true });
	writeFileSync(join(RESULTS, 'chart.svg'), chart(figures));
	writeFileSync(
		join(RESULTS, 'REPORT.md'),
		`# Benchmark report

${date}, ${machine}. Gateway: the emulator in its own process on 127.0.0.1. Total run ${Math.round((Date.now() - started) / 1000)} s.

${table}

## 3. Side by side in real n8n 2.x (400 paid lookups, 10% repeats, 40 req/s cap, 50 ms latency)

${sideBySideTable(sideRows)}

![chart](chart.svg)

How each figure is taken: see bench/run.ts. Times in 1, 2 and 4 are wall time of the whole workflow run through n8n-core's WorkflowExecute; in 3 they are the span between the first and the last call the gateway saw, the same clock for every variant.
`,
	);
	console.log(`\n${table}\n\nSide by side:\n${sideBySideTable(sideRows)}\n\nReport: bench/results/REPORT.md`);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
