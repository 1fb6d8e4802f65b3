/**
 * Bulk SMS in real n8n (issue 36): n8n 2.41 in regular mode with the package installed the Community
 * Nodes way runs one Send node (the latest SMS version, a template without variables, default
 * options, concurrency 10) over 1,000 and 10,000 distinct numbers, the emulator in its own process
 * at 20 ms latency; once with the send records in the SQLite file (n8n 2.x's default without
 * Redis) and once in Redis (the credential's Shared Redis URL). Each run is one `n8n execute`
 * process with bench/bulkSmsProbe.cjs preloaded, which counts the store round trips and takes the
 * node's CPU time; the node's time is the one n8n records in the execution.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { parsePrintedRun } from '../test/e2e/printedRun';
import { ensureRuntime, installAsCommunityPackage, n8nCommand, NODE_TYPE_PREFIX, packPackage, REPO_ROOT, type Runtime } from '../scripts/n8n-runtime';
import { startRedis } from '../scripts/n8n-runtime/queue';
import type { Figure } from './figure';
import type { EmulatorProcess } from './gateway';

export type BulkStore = 'SQLite' | 'Redis';

export interface BulkRun {
	store: BulkStore;
	numbers: number;
	/** The Send node's executionTime in the execution's run data. */
	nodeMs: number;
	idealMs: number;
	/** First to last send the emulator saw. */
	sendSpanMs: number;
	sent: number;
	failed: number;
	/** Per send: the send records' atomic updates, the SQLite store's transactions, the Redis store's commands. */
	recordUpdatesPerSend: number;
	sqliteTransactionsPerSend: number;
	redisCommandsPerSend: number;
	/** The main thread's CPU time while the node ran, per message. */
	nodeCpuUsPerMessage: number;
	loadAverage: [number, number];
}

export const BULK_LATENCY_MS = 20;
export const BULK_CONCURRENCY = 10;
export const BULK_SIZES = [1000, 10_000];
export const BULK_TARGET = 1.1;
const CREDENTIALS: Record<BulkStore, string> = { SQLite: 'dgwBulkSqlite', Redis: 'dgwBulkRedis' };

/** `count` distinct mobile numbers under a prefix of its own per run (a number holding 404 is the emulator's not-found marker). */
function numbersCode(prefix: string, count: number): string {
	return `const items = [];\nfor (let index = 0; items.length < ${count}; index++) {\n\tconst phone = '${prefix}' + String(index).padStart(8, '0');\n\tif (!phone.includes('404')) items.push({ json: { phone } });\n}\nreturn items;`;
}

function workflow(id: string, store: BulkStore, prefix: string, count: number, emulator: EmulatorProcess) {
	return {
		id,
		name: `Bulk SMS ${count} (${store})`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{ id: 'start', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
			{ id: 'numbers', name: 'Numbers', type: 'n8n-nodes-base.code', typeVersion: 2, position: [200, 0], parameters: { jsCode: numbersCode(prefix, count) } },
			{
				id: 'send',
				name: 'Send',
				type: `${NODE_TYPE_PREFIX}dataGatewaySms`,
				typeVersion: 1.4,
				position: [400, 0],
				parameters: {
					resource: 'message',
					operation: 'send',
					signId: { __rl: true, mode: 'id', value: emulator.demo.signatureId },
					templateId: { __rl: true, mode: 'id', value: (emulator.demo as { templateWithoutVariablesId?: string }).templateWithoutVariablesId },
					phone: '={{ $json.phone }}',
					variablesInput: 'none',
				},
				credentials: { dataGatewayApi: { id: CREDENTIALS[store], name: `Bulk ${store}` } },
			},
		],
		connections: {
			Start: { main: [[{ node: 'Numbers', type: 'main', index: 0 }]] },
			Numbers: { main: [[{ node: 'Send', type: 'main', index: 0 }]] },
		},
	};
}

type PrintedRun = { data: { resultData: { runData: Record<string, Array<{ executionTime: number; data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>> } } };
type ProbeFigures = { executeCpuMs: number; executes: number; recordUpdates: number; sqliteTransactions: number; redisCommands: number };

/** BULK_PROFILE=<folder>: each run's node profiled into <folder>/<workflow id>.cpuprofile (see bench/profile.ts for a summary). */
function profileEnv(id: string): NodeJS.ProcessEnv {
	const folder = process.env.BULK_PROFILE;
	if (!folder) return {};
	mkdirSync(folder, { recursive: true });
	return { DGW_BULK_PROFILE: join(folder, `${id}.cpuprofile`) };
}

async function runOne(runtime: Runtime, userFolder: string, emulator: EmulatorProcess, store: BulkStore, numbers: number, id: string): Promise<BulkRun> {
	await emulator.reset();
	await emulator.setFaults({ latencyMs: BULK_LATENCY_MS });
	const probeOut = join(userFolder, `${id}.probe.json`);
	const loadBefore = loadavg()[0];
	const result = await n8nCommand(runtime, ['execute', `--id=${id}`, '--rawOutput'], {
		userFolder,
		env: { NODE_OPTIONS: `--require ${join(REPO_ROOT, 'bench', 'bulkSmsProbe.cjs')}`, DGW_BULK_PROBE_OUT: probeOut, N8N_LOG_LEVEL: 'info', ...profileEnv(id) },
	});
	if (result.code !== 0) throw new Error(`n8n execute ${id} failed (${result.code}):\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
	const loadAfter = loadavg()[0];
	const send = parsePrintedRun<PrintedRun>(result.stdout).data.resultData.runData.Send?.[0];
	if (!send) throw new Error(`${id}: no run of the Send node in the execution`);
	const items = send.data?.main?.[0] ?? [];
	const probe = JSON.parse(readFileSync(probeOut, 'utf8')) as ProbeFigures;
	if (probe.executes !== 1) throw new Error(`${id}: the probe saw ${probe.executes} runs of the SMS node`);
	const ledger = await emulator.ledger();
	const sends = ledger.calls.filter((call) => call.kind === 'call' && call.path === '/sms/send').map((call) => call.at);
	const sent = items.filter((item) => typeof item.json.taskId === 'string').length;
	return {
		store,
		numbers,
		nodeMs: send.executionTime,
		idealMs: (numbers * BULK_LATENCY_MS) / BULK_CONCURRENCY,
		sendSpanMs: sends.length > 0 ? Math.max(...sends) - Math.min(...sends) : 0,
		sent,
		failed: numbers - sent,
		recordUpdatesPerSend: probe.recordUpdates / numbers,
		sqliteTransactionsPerSend: probe.sqliteTransactions / numbers,
		redisCommandsPerSend: probe.redisCommands / numbers,
		nodeCpuUsPerMessage: (probe.executeCpuMs * 1000) / numbers,
		loadAverage: [loadBefore, loadAfter],
	};
}

/** Both stores, both sizes; `sizes` and `stores` narrow it for trying a change. */
export async function bulkSmsBench(emulator: EmulatorProcess, { sizes = BULK_SIZES, stores = ['SQLite', 'Redis'] as BulkStore[] } = {}): Promise<BulkRun[]> {
	const runtime = await ensureRuntime('2');
	const userFolder = mkdtempSync(join(tmpdir(), 'dgw-bench-bulk-'));
	const redis = await startRedis(() => undefined);
	try {
		installAsCommunityPackage(runtime, userFolder, packPackage(join(userFolder, 'pack')));
		// The numbers are distinct; the gateway's own per-number limits are not what is measured.
		await emulator.configure({ smsLimits: { perMinute: 1000, perHour: 1000, perDay: 1000 } });
		const staging = join(userFolder, 'import');
		mkdirSync(join(staging, 'workflows'), { recursive: true });
		const credential = (store: BulkStore) => ({
			id: CREDENTIALS[store],
			name: `Bulk ${store}`,
			type: 'dataGatewayApi',
			data: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxConcurrent: BULK_CONCURRENCY, ...(store === 'Redis' ? { sharedLimitRedisUrl: redis.url } : {}) },
		});
		writeFileSync(join(staging, 'credentials.json'), JSON.stringify(stores.map(credential)));
		const plan = stores.flatMap((store, storeIndex) => sizes.map((size, sizeIndex) => ({ store, size, id: `dgwBulk${store}${size}`, prefix: `13${5 + storeIndex * 2 + sizeIndex}` })));
		for (const run of plan) writeFileSync(join(staging, 'workflows', `${run.id}.json`), JSON.stringify(workflow(run.id, run.store, run.prefix, run.size, emulator)));
		for (const args of [
			['import:credentials', `--input=${join(staging, 'credentials.json')}`],
			['import:workflow', '--separate', `--input=${join(staging, 'workflows')}`],
		]) {
			const result = await n8nCommand(runtime, args, { userFolder });
			if (result.code !== 0) throw new Error(`${args[0]} failed: ${result.stderr}`);
		}
		const runs: BulkRun[] = [];
		for (const run of plan) {
			runs.push(await runOne(runtime, userFolder, emulator, run.store, run.size, run.id));
			console.log(runs.at(-1));
		}
		return runs;
	} finally {
		await redis.stop();
		rmSync(userFolder, { recursive: true, force: true });
	}
}

export const BULK_START = '<!-- bulk-sms -->';
export const BULK_END = '<!-- /bulk-sms -->';

const STORE_NAMES: Record<BulkStore, string> = { SQLite: 'SQLite file (n8n 2.x default without Redis)', Redis: "Redis (the credential's Shared Redis URL)" };

export function bulkFigure(run: BulkRun): Figure {
	const ratio = run.nodeMs / run.idealMs;
	return {
		name: `11. Bulk SMS in real n8n, ${run.numbers.toLocaleString('en')} numbers, ${STORE_NAMES[run.store]}`,
		measured: `node ${Math.round(run.nodeMs)} ms, ${run.failed} failed`,
		target: `≤ ${BULK_TARGET} × ideal ${run.idealMs} ms`,
		ratio,
		limit: BULK_TARGET,
		pass: ratio <= BULK_TARGET && run.failed === 0,
		note: `${ratio.toFixed(2)} × ideal`,
	};
}

export function bulkSection(runs: BulkRun[], stamp: string): string {
	const rows = runs.map((run) => {
		const ratio = run.nodeMs / run.idealMs;
		return (
			`| ${run.numbers.toLocaleString('en')} | ${STORE_NAMES[run.store]} | ${Math.round(run.nodeMs)} ms | ${run.idealMs} ms | **${ratio.toFixed(2)} ×** (${ratio <= BULK_TARGET && run.failed === 0 ? 'met' : 'missed'}) ` +
			`| ${Math.round(run.sendSpanMs)} ms (${(run.sendSpanMs / run.idealMs).toFixed(2)} ×) | ${run.recordUpdatesPerSend.toFixed(3)} | ${run.store === 'Redis' ? run.redisCommandsPerSend.toFixed(3) : run.sqliteTransactionsPerSend.toFixed(3)} ` +
			`| ${run.nodeCpuUsPerMessage.toFixed(0)} µs | ${run.sent} sent, ${run.failed} failed; load average ${run.loadAverage.map((load) => load.toFixed(1)).join(' → ')} |`
		);
	});
	return `${BULK_START}
## 11. Bulk SMS in real n8n (${stamp})

Real n8n 2.41 in regular mode, the package installed the Community Nodes way; one workflow per row: Manual Trigger → Code (the numbers) → one Data Gateway SMS node, version 1.4, Send with a template without variables and default options, credential concurrency ${BULK_CONCURRENCY}; every number distinct. The emulator runs in its own process at ${BULK_LATENCY_MS} ms latency per call. Each row is one \`n8n execute\` process. Target: node time ≤ ${BULK_TARGET} × ideal in both stores.

How measured: **node time** is the Send node's \`executionTime\` in the execution's run data, as n8n records it (reading and checking every item, the send records, the paid calls, marking them sent, the output); **ideal** = numbers × ${BULK_LATENCY_MS} ms ÷ ${BULK_CONCURRENCY}. **Send span** is the first to the last \`/sms/send\` the emulator's ledger saw. Store round trips are counted inside n8n by bench/bulkSmsProbe.cjs (preloaded with \`--require\`; it wraps the installed package's methods and changes nothing they do): **record updates** = the send records' atomic updates (reserve, claim, mark sent, release; one each however often retried) ÷ numbers; **store round trips** = the SQLite store's transactions (the delivery references' included) or the Redis store's commands (TIME, reads, the compare-and-set script) ÷ numbers. **CPU per message** = the main thread's CPU time while the node's \`execute\` ran ÷ numbers (HTTP to the emulator included; the emulator's own CPU is elsewhere).

| numbers | records in | node time | ideal | node ÷ ideal | send span | record updates per send | store round trips per send | node's CPU per message | run |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}
${BULK_END}`;
}
