/**
 * Real n8n 2.41 in queue mode (Redis, PostgreSQL 17, main, 2 workers, webhook process; the
 * package installed the Community Nodes way), driven through production webhooks:
 * - 2 executions of 200 distinct telephone lookups at once, one per worker, against a 20 req/s cap;
 * - CPU time per item of the workers for this package's Telephone node and for n8n's HTTP Request
 *   node making the same calls, read from /proc (utime + stime of every process in each worker's
 *   process group, task runners included), interleaved rounds, median.
 */
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

import { startQueueHarness, type QueueHarness } from '../test/e2e/queueCluster';
import { distinctPhones, gatewayCredential, GATEWAY_CAP_PER_SECOND, httpRequestLookupWorkflow, lookupWorkflow } from '../test/e2e/queueWorkflows';
import type { EmulatorProcess } from './gateway';
import { phones } from './inputs';

export interface QueueModeResult {
	seconds: number;
	callSpanSeconds: number;
	idealSeconds: number;
	calls: number;
	rejected429: number;
	failedItems: number;
	perWorker: number[];
	cpu: { items: number; rounds: number; nodeUsPerItem: number; httpRequestUsPerItem: number; nodeRounds: number[]; httpRequestRounds: number[] };
}

const RATE = { id: 'dgwBenchRateA', path: 'bench-rate-a' };
const RATE_B = { id: 'dgwBenchRateB', path: 'bench-rate-b' };
const CPU_NODE = { id: 'dgwBenchCpuNode', path: 'bench-cpu-node' };
const CPU_HTTP = { id: 'dgwBenchCpuHttp', path: 'bench-cpu-http' };
const UNLIMITED_CREDENTIAL = 'dgwBenchUnlimited';
const ITEMS = 200;
const CPU_ITEMS = 1000;
const CPU_ROUNDS = 3;

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** utime + stime in ms of the given processes (those that exist). */
function cpuMsOf(pids: number[]): number {
	let ticks = 0;
	for (const pid of pids) {
		try {
			// Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
			const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
			ticks += Number(fields[11]) + Number(fields[12]);
		} catch {
			// Gone since it was listed.
		}
	}
	return (ticks * 1000) / TICKS_PER_SECOND;
}

const workersCpuMs = (harness: QueueHarness) => cpuMsOf(harness.cluster.workers.flatMap((worker) => worker.pids()));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function post(url: string, body: unknown): Promise<Array<Record<string, unknown>>> {
	const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
	if (!response.ok) throw new Error(`${url} answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
	return (await response.json()) as Array<Record<string, unknown>>;
}

const failedIn = (items: Array<Record<string, unknown>>) => items.filter((item) => item.error !== undefined).length;

export async function queueMode(emulator: EmulatorProcess, log: (text: string) => void = console.log): Promise<QueueModeResult> {
	const harness = await startQueueHarness(
		{
			credentials: (redis) => [
				gatewayCredential({ gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: GATEWAY_CAP_PER_SECOND, sharedLimitRedisUrl: redis.url }),
				gatewayCredential({ id: UNLIMITED_CREDENTIAL, gatewayUrl: emulator.url, appCode: emulator.demo.memberAppCode, maxPerSecond: 0 }),
			],
			workflows: [
				lookupWorkflow(RATE.id, RATE.path),
				lookupWorkflow(RATE_B.id, RATE_B.path),
				lookupWorkflow(CPU_NODE.id, CPU_NODE.path, UNLIMITED_CREDENTIAL),
				httpRequestLookupWorkflow(CPU_HTTP.id, CPU_HTTP.path, emulator.url, emulator.demo.memberAppCode),
			],
			publish: [RATE.id, RATE_B.id, CPU_NODE.id, CPU_HTTP.id],
		},
		log,
	);
	try {
		const webhook = harness.cluster.webhook.url;
		// Two executions at once, one per worker, sharing the credential's 20 req/s through Redis.
		await emulator.reset();
		await emulator.setFaults({ rateCapPerSecond: GATEWAY_CAP_PER_SECOND });
		const before = harness.cluster.workers.map((worker) => worker.log().length);
		const started = Date.now();
		const answers = await Promise.all([
			post(`${webhook}/webhook/${RATE.path}`, { phones: distinctPhones('139', ITEMS) }),
			post(`${webhook}/webhook/${RATE_B.path}`, { phones: distinctPhones('138', ITEMS) }),
		]);
		const seconds = (Date.now() - started) / 1000;
		const ledger = await emulator.ledger();
		const callTimes = ledger.calls.map((call) => call.at);
		const perWorker = harness.cluster.workers.map((worker, index) => [...worker.log().slice(before[index]).matchAll(/Worker started execution/g)].length);

		// CPU per item: no cap, no latency; package node and HTTP Request node in turns.
		await emulator.reset();
		await emulator.setFaults({});
		const nodeRounds: number[] = [];
		const httpRequestRounds: number[] = [];
		// The same numbers every round: answers are shared within an execution only, so each round pays for each.
		const cpuPhones = phones(CPU_ITEMS).map((phone) => ({ phone }));
		const measure = async (path: string) => {
			const cpuBefore = workersCpuMs(harness);
			const items = await post(`${webhook}/webhook/${path}`, { phones: cpuPhones });
			const failed = items.filter((item) => item.error !== undefined);
			if (items.length !== CPU_ITEMS || failed.length > 0) throw new Error(`${path}: ${items.length} items, ${failed.length} failed: ${JSON.stringify(failed.slice(0, 2))}`);
			return ((workersCpuMs(harness) - cpuBefore) / CPU_ITEMS) * 1000;
		};
		await measure(CPU_NODE.path);
		await measure(CPU_HTTP.path);
		for (let round = 0; round < CPU_ROUNDS; round++) {
			nodeRounds.push(await measure(CPU_NODE.path));
			httpRequestRounds.push(await measure(CPU_HTTP.path));
		}
		return {
			seconds,
			callSpanSeconds: (Math.max(...callTimes) - Math.min(...callTimes)) / 1000,
			idealSeconds: (2 * ITEMS) / GATEWAY_CAP_PER_SECOND,
			calls: ledger.totals.calls,
			rejected429: ledger.totals.rejected429,
			failedItems: answers.reduce((sum, items) => sum + failedIn(items) + Math.max(0, ITEMS - items.length), 0),
			perWorker,
			cpu: {
				items: CPU_ITEMS,
				rounds: CPU_ROUNDS,
				nodeUsPerItem: median(nodeRounds),
				httpRequestUsPerItem: median(httpRequestRounds),
				nodeRounds,
				httpRequestRounds,
			},
		};
	} finally {
		await harness.stop();
	}
}
