/**
 * The SMS send records at volume (issue 19): 20,000 sends through one SMS node in 40 executions of
 * 500 (emulator, 0 ms latency), once with the records in Redis and once in n8n's processed-data
 * store as the test harness provides it (n8n's algorithm, in memory). Per store: the records' time
 * per send in the first and the last execution (wall time inside reserve and release, over the
 * sends), the longest event-loop block during the last execution, and the stored size per number.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

// The built package, as users run it (npm run bench builds first); the guard is patched to time it.
import { DataGatewaySms } from '../dist/nodes/DataGatewaySms/DataGatewaySms.node.js';
import { parseRedisUrl, SharedRedis } from '../dist/nodes/shared/store/redis/connection.js';
import { SendRecords } from '../dist/nodes/shared/store/sendRecords/sendRecords.js';
import { closeAllRedis } from '../dist/nodes/shared/testing.js';
import { REPO_ROOT } from '../scripts/n8n-runtime';
import { startRedis } from '../scripts/n8n-runtime/queue';
import { codeVariable, sendParameters } from '../test/harness/sms';
import { processedData, runWorkflow } from '../test/harness/workflow';
import { startEmulatorProcess, type EmulatorProcess } from './gateway';

export const RECORDS_SENDS = 20_000;
export const RECORDS_BATCH = 500;
const WARM_UP_SENDS = 100;

export interface StoreRun {
	store: 'Redis' | "n8n's database (harness)";
	firstMsPerSend: number;
	lastMsPerSend: number;
	/** Longest event-loop delay seen during the last execution, whole process. */
	lastMaxBlockMs: number;
	/** The same, only while the records were at work (reserve or release in progress). */
	lastRecordsBlockMs: number;
	bytesPerNumber: number;
	sends: number;
	failedItems: number;
	totalSeconds: number;
	/** n8n's database store only: a JSON parse and write of the row at its final size, what real n8n adds to every call. */
	rowJsonMs?: number;
	rowBytes?: number;
}

/** Wall time spent inside the records, summed per execution, and the event-loop delay while they work. */
const timing: { ms: number; delay?: IntervalHistogram; active: number; longestSyncMs: number } = { ms: 0, active: 0, longestSyncMs: 0 };
function timeRecords() {
	const prototype = SendRecords.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
	for (const method of ['reserve', 'claim', 'markSent', 'release']) {
		const original = prototype[method];
		prototype[method] = async function (this: unknown, ...args: unknown[]) {
			const started = performance.now();
			if (timing.active++ === 0) timing.delay?.enable();
			// A call that never lets the event loop turn (a store without I/O) blocks it for all its time,
			// which the delay monitor cannot see: its timer only fires after the call.
			let turned = false;
			const turn = setImmediate(() => (turned = true));
			try {
				return await original.apply(this, args);
			} finally {
				const elapsed = performance.now() - started;
				timing.ms += elapsed;
				clearImmediate(turn);
				if (!turned) timing.longestSyncMs = Math.max(timing.longestSyncMs, elapsed);
				if (--timing.active === 0) timing.delay?.disable();
			}
		};
	}
}

const phoneOf = (index: number) => `137${String(index).padStart(8, '0')}`;

async function sendAll(emulator: EmulatorProcess, store: StoreRun['store'], credential: Record<string, unknown>): Promise<Omit<StoreRun, 'bytesPerNumber'>> {
	const sms = new DataGatewaySms();
	const parameters = sendParameters(emulator, { variables: codeVariable('={{ $json.code }}'), sendOptions: { repeatWindowMinutes: 10 } });
	const batches = RECORDS_SENDS / RECORDS_BATCH;
	const perSend: number[] = [];
	const run = async (items: Array<{ phone: string; code: string }>, executionId: string) =>
		await runWorkflow({
			steps: [{ name: 'SMS', type: sms, parameters, settings: { continueOnFail: true } }],
			items,
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, ...credential } },
			executionId,
		});
	// Not timed: opens the connections and warms the code up, so the first figure is an empty store's, not a cold start's.
	const warmUp = await run(Array.from({ length: WARM_UP_SENDS }, (_, index) => ({ phone: `136${String(index).padStart(8, '0')}`, code: '1357' })), `bench-records-warm-up-${store}`);
	if (warmUp.error) throw new Error(`the warm-up failed: ${warmUp.error.message}`);
	let lastMaxBlockMs = 0;
	let lastRecordsBlockMs = 0;
	let sends = 0;
	let failedItems = 0;
	const started = performance.now();
	for (let batch = 0; batch < batches; batch++) {
		const items = Array.from({ length: RECORDS_BATCH }, (_, index) => ({ phone: phoneOf(batch * RECORDS_BATCH + index), code: '2468' }));
		const last = batch === batches - 1;
		const delay = monitorEventLoopDelay({ resolution: 1 });
		if (last) {
			delay.enable();
			timing.delay = monitorEventLoopDelay({ resolution: 1 });
			timing.longestSyncMs = 0;
		}
		timing.ms = 0;
		const result = await run(items, `bench-records-${store}-${batch}`);
		if (last) {
			delay.disable();
			lastMaxBlockMs = delay.max / 1e6;
			lastRecordsBlockMs = Math.max((timing.delay?.max ?? 0) / 1e6, timing.longestSyncMs);
			timing.delay = undefined;
		}
		if (result.error) throw new Error(`batch ${batch} failed: ${result.error.message}`);
		const output = result.json();
		failedItems += output.filter((item) => item.error !== undefined).length;
		sends += output.filter((item) => typeof item.taskId === 'string').length;
		perSend.push(timing.ms / RECORDS_BATCH);
	}
	return { store, firstMsPerSend: perSend[0], lastMsPerSend: perSend[perSend.length - 1], lastMaxBlockMs, lastRecordsBlockMs, sends, failedItems, totalSeconds: (performance.now() - started) / 1000 };
}

async function usedMemory(redis: SharedRedis): Promise<number> {
	const info = String(await redis.command('INFO', ['memory']));
	return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

export async function recordsBench(emulator: EmulatorProcess): Promise<StoreRun[]> {
	timeRecords();
	// The gateway's own per-number limits are not measured here.
	const reset = async () => {
		await emulator.reset();
		await emulator.configure({ smsLimits: { perMinute: 1000, perHour: 1000, perDay: 1000 } });
	};
	const runs: StoreRun[] = [];

	const redisServer = await startRedis(() => undefined);
	try {
		await reset();
		const inspector = new SharedRedis(parseRedisUrl(redisServer.url));
		const before = await usedMemory(inspector);
		const run = await sendAll(emulator, 'Redis', { sharedLimitRedisUrl: redisServer.url });
		const after = await usedMemory(inspector);
		inspector.close();
		runs.push({ ...run, bytesPerNumber: (after - before) / (RECORDS_SENDS + WARM_UP_SENDS) });
		console.log(runs.at(-1));
	} finally {
		closeAllRedis();
		await redisServer.stop();
	}

	await reset();
	processedData.records.clear();
	const run = await sendAll(emulator, "n8n's database (harness)", {});
	const rows = [...processedData.records.values()];
	const rowJson = JSON.stringify({ mode: 'entries', data: rows.flat().map((value) => md5(String(value))) });
	const parseStarted = performance.now();
	JSON.stringify(JSON.parse(rowJson));
	const rowJsonMs = performance.now() - parseStarted;
	runs.push({ ...run, bytesPerNumber: Buffer.byteLength(rowJson) / (RECORDS_SENDS + WARM_UP_SENDS), rowJsonMs, rowBytes: Buffer.byteLength(rowJson) });
	console.log(runs.at(-1));
	return runs;
}

/** n8n stores each value as its MD5 in base64 (24 characters); the harness keeps the value itself. */
const md5 = (value: string) => createHash('md5').update(value).digest('base64');

const SECTION_START = '<!-- send-records -->';
const SECTION_END = '<!-- /send-records -->';
const TARGET_MS = 2;
const TARGET_GROWTH = 1.2;
const TARGET_BLOCK_MS = 20;

const met = (pass: boolean) => (pass ? 'met' : 'missed');

export function recordsSection(runs: StoreRun[], stamp: string): string {
	const rows = runs.map((run) => {
		const growth = run.lastMsPerSend / run.firstMsPerSend;
		return `| ${run.store} | ${run.firstMsPerSend.toFixed(3)} ms | ${run.lastMsPerSend.toFixed(3)} ms (${met(run.lastMsPerSend <= TARGET_MS)}) | ${growth.toFixed(2)} × (${met(growth <= TARGET_GROWTH)}) | ${run.lastMaxBlockMs.toFixed(1)} ms (${met(run.lastMaxBlockMs <= TARGET_BLOCK_MS)}); while the records worked ${run.lastRecordsBlockMs.toFixed(1)} ms (${met(run.lastRecordsBlockMs <= TARGET_BLOCK_MS)}) | ${Math.round(run.bytesPerNumber)} B | ${run.sends} sent, ${run.failedItems} failed, ${run.totalSeconds.toFixed(1)} s |`;
	});
	const db = runs.find((run) => run.rowBytes !== undefined);
	return `${SECTION_START}
## 9. SMS send records at volume (${stamp})

${RECORDS_SENDS.toLocaleString('en')} sends through one SMS node, ${RECORDS_SENDS / RECORDS_BATCH} executions of ${RECORDS_BATCH} after an untimed warm-up of ${WARM_UP_SENDS} (each to a number of its own; Repeat Window 10 minutes, the default per-number limits), emulator at 0 ms latency, run through n8n-core's engine. Records' time = wall time inside the records' reserve and release, over the ${RECORDS_BATCH} sends of the execution. Event-loop block = longest delay \`perf_hooks.monitorEventLoopDelay\` (1 ms resolution) saw in the last execution: for the whole process (n8n's engine, the node's checks of 500 items and the records), and only while the records' reserve or release was in progress (one execution at a time, so nothing else ran then; a call that never let the event loop turn counts whole). Targets: last ≤ ${TARGET_MS} ms per send and ≤ ${TARGET_GROWTH} × the first; block ≤ ${TARGET_BLOCK_MS} ms.

| records in | first execution, per send | last execution, per send | last ÷ first | longest block, last execution | stored per number | run |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

Redis: one script per send, keys with their own expiry (stored size: Redis's used memory after ÷ numbers). n8n's database: the harness's store runs n8n's algorithm in memory (one row per node, read, searched and written whole per call); stored size is the row as n8n keeps it (MD5 base64 per value, JSON)${db ? `, ${(db.rowBytes as number / 1e6).toFixed(1)} MB at the end; real n8n also parses and writes that JSON on every call, ${(db.rowJsonMs as number).toFixed(0)} ms here at the final size, which this figure does not include` : ''}. Its cost per call grows with the values kept: n8n offers a node no store it can split per number (see README, "Send records").
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
