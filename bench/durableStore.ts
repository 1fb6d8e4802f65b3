/**
 * The durable store at send-record volume (issue 24): 20,000 sends in 40 executions of 500, each
 * send one `update` over the keys a send's records touch (the message for the repeat window, the
 * number's minute, hour and day counts, the item's record), all 500 of an execution started at
 * once as a batch does. Per store (SQLite file, Redis): time per send in the first and the last
 * executions, the longest time between two turns of the event loop in the last ones (it includes
 * time the OS gave to other processes), and the stored bytes per number.
 * Run: `npx tsx bench/durableStore.ts` (Node 24 through npm's PATH); prints a Markdown table.
 * It models the records' store traffic; section 9 of bench/records.ts measures them through the
 * SMS node once they run on this store.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import type { DurableStore } from '../nodes/shared/store/durableStore';
import { nodeSqlite } from '../nodes/shared/store/hostEnvironment';
import { parseRedisUrl, redisFor, SharedRedis } from '../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../nodes/shared/store/sqliteStore';
import { closeAllRedis } from '../nodes/shared/testing';
import { startRedis } from '../scripts/n8n-runtime/queue';

const SENDS = 20_000;
const BATCH = 500;
const WARM_UP = 100;
const MINUTE = 60_000;

interface Run {
	store: string;
	firstMsPerSend: number;
	lastMsPerSend: number;
	lastBlockMs: number;
	firstCpuMsPerSend: number;
	lastCpuMsPerSend: number;
	bytesPerNumber: number;
	seconds: number;
}

/** The longest time between two turns of the event loop while it runs (setImmediate sees every turn, also when nothing else is pending). */
function turnGaps(): { stop: () => number } {
	let last = performance.now();
	let longest = 0;
	let running = true;
	const turn = () => {
		const now = performance.now();
		longest = Math.max(longest, now - last);
		last = now;
		if (running) setImmediate(turn);
	};
	setImmediate(turn);
	return {
		stop: () => {
			running = false;
			return Math.max(longest, performance.now() - last);
		},
	};
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const phoneOf = (index: number) => `137${String(index).padStart(8, '0')}`;

/** One send's records, as one update: refuse a repeat, count the number's windows, keep the item's record. */
function recordSend(store: DurableStore, phone: string, execution: string, item: number): Promise<'send' | 'repeat'> {
	const keys = [`sms|node-1|message|${phone}|sig|tpl|code=2468`, `sms|node-1|minute|${phone}`, `sms|node-1|hour|${phone}`, `sms|node-1|day|${phone}`, `sms|node-1|item|${execution}|0|${item}`];
	return store.update(keys, ([message, minute, hour, day], now) => {
		if (message !== undefined) return { writes: [], result: 'repeat' as const };
		const count = (value: string | undefined) => String(Number(value ?? '0') + 1);
		return {
			writes: [
				{ key: keys[0], value: String(now), ttlMs: 10 * MINUTE },
				{ key: keys[1], value: count(minute), ttlMs: MINUTE - (now % MINUTE) },
				{ key: keys[2], value: count(hour), ttlMs: 60 * MINUTE - (now % (60 * MINUTE)) },
				{ key: keys[3], value: count(day), ttlMs: 24 * 60 * MINUTE - (now % (24 * 60 * MINUTE)) },
				{ key: keys[4], value: JSON.stringify({ state: 'reserved', phone, at: now }), ttlMs: 24 * 60 * MINUTE },
			],
			result: 'send' as const,
		};
	});
}

async function sendAll(name: string, store: DurableStore, storedBytes: () => Promise<number>): Promise<Run> {
	await Promise.all(Array.from({ length: WARM_UP }, (_, index) => recordSend(store, `136${String(index).padStart(8, '0')}`, 'warm-up', index)));
	const before = await storedBytes();
	const perSend: number[] = [];
	const cpuPerSend: number[] = [];
	const started = performance.now();
	const batches = SENDS / BATCH;
	const blocks: number[] = [];
	for (let batch = 0; batch < batches; batch++) {
		const gaps = batch >= batches - 3 ? turnGaps() : undefined;
		const batchStarted = performance.now();
		const cpuBefore = process.cpuUsage();
		const outcomes = await Promise.all(Array.from({ length: BATCH }, (_, index) => recordSend(store, phoneOf(batch * BATCH + index), `execution-${batch}`, index)));
		perSend.push((performance.now() - batchStarted) / BATCH);
		const cpu = process.cpuUsage(cpuBefore);
		cpuPerSend.push((cpu.user + cpu.system) / 1000 / BATCH);
		if (gaps) blocks.push(gaps.stop());
		if (outcomes.some((outcome) => outcome !== 'send')) throw new Error(`batch ${batch}: a first send was seen as a repeat`);
	}
	const seconds = (performance.now() - started) / 1000;
	// Medians of three executions and of their longest blocks: on a shared machine one execution can lose the CPU.
	return { store: name, firstMsPerSend: median(perSend.slice(0, 3)), lastMsPerSend: median(perSend.slice(-3)), lastBlockMs: median(blocks), firstCpuMsPerSend: median(cpuPerSend.slice(0, 3)), lastCpuMsPerSend: median(cpuPerSend.slice(-3)), bytesPerNumber: ((await storedBytes()) - before) / SENDS, seconds };
}

async function main() {
	const runs: Run[] = [];
	const sqlite = nodeSqlite();
	if (!sqlite) throw new Error(`node:sqlite is missing in Node ${process.version}: run with npx tsx (Node 24)`);
	const folder = mkdtempSync(join(tmpdir(), 'dgw-bench-store-'));
	try {
		const file = join(folder, 'data-gateway-store.sqlite');
		const store = new SqliteDurableStore(sqlite, file);
		const size = async () => {
			// Counts the pages in use: the WAL's changes are moved into the file first.
			const database = new sqlite.DatabaseSync(file);
			database.exec('PRAGMA wal_checkpoint(TRUNCATE)');
			database.close();
			return statSync(file).size;
		};
		runs.push(await sendAll('SQLite file', store, size));
		store.close();
	} finally {
		rmSync(folder, { recursive: true, force: true });
	}
	const server = await startRedis(() => undefined);
	try {
		const inspector = new SharedRedis(parseRedisUrl(server.url));
		const used = async () => Number(/used_memory:(\d+)/.exec(String(await inspector.command('INFO', ['memory'])))?.[1] ?? 0);
		runs.push(await sendAll('Redis', new RedisDurableStore(redisFor({ url: server.url }, 'bench'), 'Redis', () => ''), used));
		inspector.close();
	} finally {
		closeAllRedis();
		await server.stop();
	}
	console.log(`Durable store, ${SENDS.toLocaleString('en')} sends in ${SENDS / BATCH} executions of ${BATCH} (each send one update of 5 keys; Node ${process.version}; load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)\n`);
	console.log('| store | first executions, per send (median of 3) | last executions, per send (median of 3) | last ÷ first | CPU per send, first → last | longest time between event-loop turns, last executions (median of 3) | stored per number | run |');
	console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
	for (const run of runs) {
		console.log(
			`| ${run.store} | ${run.firstMsPerSend.toFixed(3)} ms | ${run.lastMsPerSend.toFixed(3)} ms | ${(run.lastMsPerSend / run.firstMsPerSend).toFixed(2)} × | ${run.firstCpuMsPerSend.toFixed(3)} → ${run.lastCpuMsPerSend.toFixed(3)} ms (${(run.lastCpuMsPerSend / run.firstCpuMsPerSend).toFixed(2)} ×) | ${run.lastBlockMs.toFixed(1)} ms | ${Math.round(run.bytesPerNumber)} B | ${run.seconds.toFixed(1)} s |`,
		);
	}
}

void main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
