/**
 * Bulk SMS in real n8n (issue 36): n8n 2.41 in regular mode with the package installed the Community
 * Nodes way runs one Send node (the latest SMS version, a template without variables, default
 * options, concurrency 10) over 1,000 and 10,000 distinct numbers, the emulator in its own process
 * at 20 ms latency; once with the send records in the SQLite file (n8n 2.x's default without
 * Redis) and once in Redis (the credential's Shared Redis URL). Each run is one `n8n execute`
 * process with bench/bulkSmsProbe.cjs preloaded, which counts the store round trips and takes the
 * node's CPU time; the node's time is the one n8n records in the execution.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { parsePrintedRun } from '../test/e2e/printedRun';
import { ensureRuntime, freePort, installAsCommunityPackage, n8nCommand, NODE_TYPE_PREFIX, packPackage, REPO_ROOT, type Runtime } from '../scripts/n8n-runtime';
import { startRedis } from '../scripts/n8n-runtime/queue';
import type { Figure } from './figure';
import { Agent, request } from 'undici';

import { SMS_VERSION_1_5 } from '../nodes/shared/n8n/description';
import type { EmulatorProcess } from './gateway';

/** The SMS node's version measured: the latest, whose Send decides window and opt-outs as each message leaves (issue 41). */
const SMS_VERSION = SMS_VERSION_1_5;

export type BulkStore = 'SQLite' | 'Redis';

export interface BulkRun {
	store: BulkStore;
	numbers: number;
	/** The Send node's executionTime in the execution's run data. */
	nodeMs: number;
	idealMs: number;
	/** First to last send the emulator saw. */
	sendSpanMs: number;
	/** From the node's start (its startTime in the run data) to the first send, and from the last send to its end. */
	beforeFirstSendMs: number;
	/** Of the time before the first send: reading and checking the items (and the opt-out list), then reserving them in the send records. */
	checksMs: number;
	reserveMs: number;
	afterLastSendMs: number;
	sent: number;
	failed: number;
	/** Per send: the send records' atomic updates, the SQLite store's transactions, the Redis store's commands. */
	recordUpdatesPerSend: number;
	sqliteTransactionsPerSend: number;
	/** Tries of those transactions, a busy file (another connection's lock) tried again included. */
	sqliteAttemptsPerSend: number;
	/** The SQLite transactions by what they were for (writing, reading, sweeping). */
	sqliteByWhat: Record<string, number>;
	redisCommandsPerSend: number;
	/** The main thread's CPU time while the node ran, per message. */
	nodeCpuUsPerMessage: number;
	loadAverage: [number, number];
	/** n8n's Edit Fields node over the same numbers, one expression per item (floorWorkflow): its node time. */
	floorMs?: number;
	/** A bare undici loop sending as many messages 10 at a time from the bench process, just before: first to last send. */
	bareSpanMs: number;
	/** The run's usage counting (usage/runUsage.ts countRunUsage: the counts and their one store update), wall time (issue 43). */
	usageMs: number;
	/** Node ÷ floor of every repeat of this row, in the order run; this run is the median one. */
	repeatRatios?: number[];
}

export const BULK_LATENCY_MS = 20;
export const BULK_CONCURRENCY = 10;
export const BULK_SIZES = [1000, 10_000];
export const BULK_TARGET = 1.1;
/** Runs of each row, interleaved with the other rows': one run moves by ±5 % with the machine (BULK_REPEATS overrides). */
export const BULK_REPEATS = 3;
const CREDENTIALS: Record<BulkStore, string> = { SQLite: 'dgwBulkSqlite', Redis: 'dgwBulkRedis' };

/** `count` distinct mobile numbers under a prefix of its own per row, from `first` on in each repeat (a number holding 404 is the emulator's not-found marker). */
function numbersCode(prefix: string, count: number, first = 0): string {
	return `const items = [];\nfor (let index = ${first}; items.length < ${count}; index++) {\n\tconst phone = '${prefix}' + String(index).padStart(8, '0');\n\tif (!phone.includes('404')) items.push({ json: { phone } });\n}\nreturn items;`;
}

/** Start → Numbers (a Code node making `count` distinct numbers) → the node measured, named Send. */
function numbersThen(id: string, name: string, count: number, prefix: string, send: Record<string, unknown>, first = 0) {
	return {
		id,
		name,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{ id: 'start', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
			{ id: 'numbers', name: 'Numbers', type: 'n8n-nodes-base.code', typeVersion: 2, position: [200, 0], parameters: { jsCode: numbersCode(prefix, count, first) } },
			{ id: 'send', name: 'Send', position: [400, 0], ...send },
		],
		connections: {
			Start: { main: [[{ node: 'Numbers', type: 'main', index: 0 }]] },
			Numbers: { main: [[{ node: 'Send', type: 'main', index: 0 }]] },
		},
	};
}

function workflow(id: string, store: BulkStore, prefix: string, count: number, emulator: EmulatorProcess, first: number) {
	return numbersThen(id, `Bulk SMS ${count} (${store})`, count, prefix, {
		type: `${NODE_TYPE_PREFIX}dataGatewaySms`,
		typeVersion: SMS_VERSION,
		parameters: {
			resource: 'message',
			operation: 'send',
			signId: { __rl: true, mode: 'id', value: emulator.demo.signatureId },
			templateId: { __rl: true, mode: 'id', value: emulator.demo.templateWithoutVariablesId },
			phone: '={{ $json.phone }}',
			variablesInput: 'none',
		},
		credentials: { dataGatewayApi: { id: CREDENTIALS[store], name: `Bulk ${store}` } },
	}, first);
}

/**
 * The same numbers through n8n's own Edit Fields (Set) node reading \`={{ $json.phone }}\` per item:
 * what n8n itself spends evaluating one expression per item, which the Send node pays too before its
 * first send (every item is read and checked before anything is paid).
 */
function floorWorkflow(id: string, prefix: string, count: number) {
	return numbersThen(id, `Bulk SMS floor ${count}`, count, prefix, {
		type: 'n8n-nodes-base.set',
		typeVersion: 3.4,
		parameters: { assignments: { assignments: [{ id: 'phone', name: 'phone', value: '={{ $json.phone }}', type: 'string' }] }, options: {} },
	});
}

type PrintedRun = { data: { resultData: { runData: Record<string, Array<{ startTime: number; executionTime: number; data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>> } } };
type ProbeFigures = { spans?: Record<string, [number, number]>; sendLagMs?: Record<string, number>; usageMs: number; sqliteByWhat: Record<string, number>; executeCpuMs: number; executes: number; executeStartedAt: number; reserveStartedAt: number; reserveEndedAt: number; recordUpdates: number; sqliteTransactions: number; sqliteAttempts: number; redisCommands: number };

/**
 * BULK_PROFILE=<folder>: each run's node profiled into <folder>/<workflow id>.cpuprofile (see
 * bench/profile.ts for a summary), the probe's figures beside it. BULK_SPANS=1: the probe's round
 * trips and event-loop delay printed for each run (bench/bulkSmsProbe.cjs).
 */
function profileEnv(id: string): NodeJS.ProcessEnv {
	const folder = process.env.BULK_PROFILE;
	const spans = process.env.BULK_SPANS ? { DGW_BULK_SPANS: '1' } : {};
	if (!folder) return spans;
	mkdirSync(folder, { recursive: true });
	return { ...spans, DGW_BULK_PROFILE: join(folder, `${id}.cpuprofile`) };
}

/**
 * `n8n execute --id=<id> --rawOutput` with its output written to a file: n8n ends its process once
 * the run is printed, and a pipe would lose what it had not yet passed on (10,000 items print ~5 MB).
 */
async function executeToFile(runtime: Runtime, userFolder: string, id: string, file: string, env: NodeJS.ProcessEnv): Promise<void> {
	const out = openSync(file, 'w');
	const ports = { N8N_PORT: String(await freePort()), N8N_RUNNERS_BROKER_PORT: String(await freePort()) };
	const child = spawn(runtime.nodeBin, [runtime.n8nBin, 'execute', `--id=${id}`, '--rawOutput'], {
		cwd: userFolder,
		env: { ...runtime.env(userFolder), N8N_LISTEN_ADDRESS: '127.0.0.1', ...ports, ...env },
		stdio: ['ignore', out, 'pipe'],
		detached: true,
	});
	let stderr = '';
	child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
	const code = await new Promise<number>((done) => child.once('close', (exitCode) => done(exitCode ?? -1)));
	closeSync(out);
	try {
		// Its task runners, should any outlive it.
		if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
	} catch {
		// The group has ended.
	}
	if (code !== 0) throw new Error(`n8n execute ${id} failed (${code}):\n${readFileSync(file, 'utf8').slice(-2000)}\n${stderr}`);
}

async function floorMs(runtime: Runtime, userFolder: string, id: string): Promise<number> {
	const printed = join(userFolder, `${id}.run.json`);
	await executeToFile(runtime, userFolder, id, printed, { N8N_LOG_LEVEL: 'info' });
	const node = parsePrintedRun<PrintedRun>(readFileSync(printed, 'utf8')).data.resultData.runData.Send?.[0];
	if (!node) throw new Error(`${id}: no run of the Edit Fields node`);
	return node.executionTime;
}

/**
 * What the machine allows at this moment: a bare undici loop sending `count` messages (numbers of
 * its own), BULK_CONCURRENCY at a time, to the same emulator at the same latency; the first to the
 * last send the emulator saw. On a busy machine the emulator itself answers late.
 */
async function bareSendSpan(emulator: EmulatorProcess, count: number): Promise<number> {
	await emulator.reset();
	await emulator.setFaults({ latencyMs: BULK_LATENCY_MS });
	const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
	const { signatureId, templateWithoutVariablesId } = emulator.demo;
	const phones = Array.from({ length: count * 2 }, (_, index) => `134${String(index).padStart(8, '0')}`).filter((phone) => !phone.includes('404')).slice(0, count);
	let next = 0;
	await Promise.all(
		Array.from({ length: BULK_CONCURRENCY }, async () => {
			while (next < count) {
				const phone = phones[next++];
				const query = new URLSearchParams({ signId: signatureId, templateId: templateWithoutVariablesId, phone, appCode: emulator.demo.memberAppCode });
				const response = await request(`${emulator.url}/sms/send?${query}`, { dispatcher: agent });
				JSON.parse(await response.body.text());
			}
		}),
	);
	await agent.close();
	const sends = (await emulator.ledger()).calls.filter((call) => call.kind === 'call' && call.path === '/sms/send').map((call) => call.at);
	return Math.max(...sends) - Math.min(...sends);
}

async function runOne(runtime: Runtime, userFolder: string, emulator: EmulatorProcess, store: BulkStore, numbers: number, id: string): Promise<BulkRun> {
	const bareSpanMs = await bareSendSpan(emulator, numbers);
	await emulator.reset();
	await emulator.setFaults({ latencyMs: BULK_LATENCY_MS });
	const probeOut = join(userFolder, `${id}.probe.json`);
	const loadBefore = loadavg()[0];
	const printed = join(userFolder, `${id}.run.json`);
	await executeToFile(runtime, userFolder, id, printed, { NODE_OPTIONS: `--require ${join(REPO_ROOT, 'bench', 'bulkSmsProbe.cjs')}`, DGW_BULK_PROBE_OUT: probeOut, N8N_LOG_LEVEL: 'info', ...profileEnv(id) });
	const loadAfter = loadavg()[0];
	const send = parsePrintedRun<PrintedRun>(readFileSync(printed, 'utf8')).data.resultData.runData.Send?.[0];
	if (!send) throw new Error(`${id}: no run of the Send node in the execution`);
	const items = send.data?.main?.[0] ?? [];
	const probe = JSON.parse(readFileSync(probeOut, 'utf8')) as ProbeFigures;
	if (process.env.BULK_SPANS) console.log(id, 'spans [calls, total ms]:', JSON.stringify(probe.spans), 'event-loop delay while sending (ms):', JSON.stringify(probe.sendLagMs));
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
		beforeFirstSendMs: sends.length > 0 ? Math.min(...sends) - send.startTime : 0,
		checksMs: probe.reserveStartedAt - probe.executeStartedAt,
		reserveMs: probe.reserveEndedAt - probe.reserveStartedAt,
		afterLastSendMs: sends.length > 0 ? send.startTime + send.executionTime - Math.max(...sends) : 0,
		sent,
		failed: numbers - sent,
		recordUpdatesPerSend: probe.recordUpdates / numbers,
		sqliteTransactionsPerSend: probe.sqliteTransactions / numbers,
		sqliteAttemptsPerSend: probe.sqliteAttempts / numbers,
		sqliteByWhat: probe.sqliteByWhat,
		redisCommandsPerSend: probe.redisCommands / numbers,
		nodeCpuUsPerMessage: (probe.executeCpuMs * 1000) / numbers,
		loadAverage: [loadBefore, loadAfter],
		bareSpanMs,
		usageMs: probe.usageMs,
	};
}

/** Each row's run with the median node ÷ floor, every repeat's ratio beside it. */
function medianRun(repeats: BulkRun[]): BulkRun {
	const ratios = repeats.map((run) => run.nodeMs / floorOf(run));
	const byRatio = repeats.map((run, index) => ({ run, ratio: ratios[index] })).sort((a, b) => a.ratio - b.ratio);
	return { ...byRatio[Math.floor((byRatio.length - 1) / 2)].run, repeatRatios: ratios };
}

/**
 * Both stores, both sizes, each row `repeats` times, a store's sizes taking turns; each run's floor is
 * taken just before it (Edit Fields, then the bare loop). `sizes` and `stores` narrow it for trying a change.
 */
export async function bulkSmsBench(emulator: EmulatorProcess, { sizes = BULK_SIZES, stores = ['SQLite', 'Redis'] as BulkStore[], repeats = BULK_REPEATS } = {}): Promise<BulkRun[]> {
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
		const rows = stores.flatMap((store, storeIndex) => sizes.map((size, sizeIndex) => ({ store, size, prefix: `13${5 + storeIndex * 2 + sizeIndex}` })));
		// One store's rows after the other's: once the account's guardrails are in Redis, its SQLite credential is refused (guardScope.ts).
		// Every repeat sends to numbers of its own: the repeat window would skip the last one's.
		const plan = stores.flatMap((store) => Array.from({ length: repeats }, (_, repeat) => rows.filter((row) => row.store === store).map((row) => ({ row, repeat, id: `dgwBulk${row.store}${row.size}r${repeat}` }))).flat());
		for (const { row, repeat, id } of plan) writeFileSync(join(staging, 'workflows', `${id}.json`), JSON.stringify(workflow(id, row.store, row.prefix, row.size, emulator, repeat * 10_000_000)));
		for (const size of sizes) writeFileSync(join(staging, 'workflows', `floor${size}.json`), JSON.stringify(floorWorkflow(`dgwBulkFloor${size}`, '139', size)));
		for (const args of [
			['import:credentials', `--input=${join(staging, 'credentials.json')}`],
			['import:workflow', '--separate', `--input=${join(staging, 'workflows')}`],
		]) {
			const result = await n8nCommand(runtime, args, { userFolder });
			if (result.code !== 0) throw new Error(`${args[0]} failed: ${result.stderr}`);
		}
		const runs = new Map(rows.map((row) => [row, [] as BulkRun[]]));
		for (const { row, id } of plan) {
			const floor = await floorMs(runtime, userFolder, `dgwBulkFloor${row.size}`);
			const measured: BulkRun = { ...(await runOne(runtime, userFolder, emulator, row.store, row.size, id)), floorMs: floor };
			runs.get(row)?.push(measured);
			console.log(id, measured);
		}
		return [...runs.values()].map(medianRun);
	} finally {
		await redis.stop();
		rmSync(userFolder, { recursive: true, force: true });
	}
}

export const BULK_START = '<!-- bulk-sms -->';
export const BULK_END = '<!-- /bulk-sms -->';

const STORE_NAMES: Record<BulkStore, string> = { SQLite: 'SQLite file (n8n 2.x default without Redis)', Redis: "Redis (the credential's Shared Redis URL)" };

/**
 * n8n's floor for the same items, measured in the same bench run (issue 41): its own Edit Fields node
 * reading the same expression per item, plus the bare undici loop sending the same messages.
 */
const floorOf = (run: BulkRun) => (run.floorMs ?? Number.NaN) + run.bareSpanMs;

/** Usage counting's share of the node's time (issue 43's target: at most 2 %). */
const usageShare = (run: BulkRun) => `usage counting ${run.usageMs.toFixed(1)} ms, ${((100 * run.usageMs) / run.nodeMs).toFixed(2)} % of the node's time`;

export function bulkFigure(run: BulkRun): Figure {
	const floor = floorOf(run);
	const ratio = run.nodeMs / floor;
	return {
		name: `12. Bulk SMS in real n8n, ${run.numbers.toLocaleString('en')} numbers, ${STORE_NAMES[run.store]}`,
		measured: `node ${Math.round(run.nodeMs)} ms (${(run.nodeMs / run.idealMs).toFixed(2)} × ideal ${run.idealMs} ms), ${run.failed} failed; ${usageShare(run)}`,
		target: `≤ ${BULK_TARGET} × n8n's floor ${Math.round(floor)} ms (Edit Fields ${Math.round(run.floorMs ?? Number.NaN)} ms + bare loop ${Math.round(run.bareSpanMs)} ms)`,
		ratio,
		limit: BULK_TARGET,
		pass: ratio <= BULK_TARGET && run.failed === 0,
		note: `${ratio.toFixed(2)} × floor (median of ${repeatsText(run)})`,
	};
}

/** Every repeat's node ÷ floor, in the order run. */
const repeatsText = (run: BulkRun) => (run.repeatRatios ?? [run.nodeMs / floorOf(run)]).map((ratio) => ratio.toFixed(2)).join(', ');

const roundTrips = (run: BulkRun) =>
	(run.store === 'Redis' ? `${run.redisCommandsPerSend.toFixed(3)} Redis commands + ` : '') +
	`${run.sqliteTransactionsPerSend.toFixed(3)} SQLite transactions${run.store === 'Redis' ? ' (the delivery references; the sweep of expired rows)' : ''}, ${run.sqliteAttemptsPerSend.toFixed(3)} tries`;

export function bulkSection(runs: BulkRun[], stamp: string): string {
	const repeats = runs[0]?.repeatRatios?.length ?? 1;
	const rows = runs.map((run) => {
		const ratio = run.nodeMs / floorOf(run);
		return (
			`| ${run.numbers.toLocaleString('en')} | ${STORE_NAMES[run.store]} | ${Math.round(run.nodeMs)} ms | ${Math.round(floorOf(run))} ms | **${ratio.toFixed(2)} ×** (${ratio <= BULK_TARGET && run.failed === 0 ? 'met' : 'missed'}; runs: ${repeatsText(run)}) | ${run.idealMs} ms (${(run.nodeMs / run.idealMs).toFixed(2)} ×) ` +
			`| ${Math.round(run.beforeFirstSendMs)} ms: checks ${Math.round(run.checksMs)} ms (n8n's Edit Fields, one expression per item: ${run.floorMs === undefined ? '–' : `${Math.round(run.floorMs)} ms`}), reserve ${Math.round(run.reserveMs)} ms | ${Math.round(run.sendSpanMs)} ms (${(run.sendSpanMs / run.idealMs).toFixed(2)} ×; a bare undici loop just before: ${Math.round(run.bareSpanMs)} ms, ${(run.bareSpanMs / run.idealMs).toFixed(2)} ×) | ${Math.round(run.afterLastSendMs)} ms | ${run.recordUpdatesPerSend.toFixed(3)} | ${roundTrips(run)} ` +
			`| ${run.nodeCpuUsPerMessage.toFixed(0)} µs | ${run.usageMs.toFixed(1)} ms (${((100 * run.usageMs) / run.nodeMs).toFixed(2)} %) | ${run.sent} sent, ${run.failed} failed; load average ${run.loadAverage.map((load) => load.toFixed(1)).join(' → ')} |`
		);
	});
	return `${BULK_START}
## 12. Bulk SMS in real n8n (${stamp})

Real n8n 2.41 in regular mode, the package installed the Community Nodes way; one workflow per row: Manual Trigger → Code (the numbers) → one Data Gateway SMS node, version ${SMS_VERSION} (window and opt-out list decided as each message leaves), Send with a template without variables and default options, credential concurrency ${BULK_CONCURRENCY}; every number distinct. The emulator runs in its own process at ${BULK_LATENCY_MS} ms latency per call. Each row ran ${repeats} times, a store's two sizes taking turns (SQLite first: once the account's guardrails are in Redis, its SQLite credential is refused); each run is one \`n8n execute\` process with its own floor taken just before it, and the table shows the run with the median node ÷ floor (every run's ratio beside it, in the order run). Target (issue 41): node time ≤ ${BULK_TARGET} × n8n's floor for the same items in both stores, the floor measured in the same bench run: n8n's own Edit Fields node reading the same expression per item plus a bare undici loop sending the same number of messages. Usage counting (issue 43) at most 2 % of the node's time.

How measured: **node time** is the Send node's \`executionTime\` in the execution's run data, as n8n records it (reading and checking every item, the send records, the paid calls, marking them sent, the output); **ideal** = numbers × ${BULK_LATENCY_MS} ms ÷ ${BULK_CONCURRENCY}; **floor** = the Edit Fields node's time plus the bare loop's send span (both below). **Usage counting** is the wall time of the run's usage step (usage/runUsage.ts: its counts and their one store update), taken by the probe. **Send span** is the first to the last \`/sms/send\` the emulator's ledger saw; **before the first send** runs from the node's \`startTime\` in the run data to the first send: the **checks** (every item read and checked, the opt-out list read; from the node's \`execute\` to the send records' reserve, taken by the probe) and the **reserve** (every item reserved in the send records, the spending cap) before anything is paid; **after the last send** from the last send to the node's end (its answer, marking the sends, the output). Beside the send span, a bare undici loop sending as many messages ${BULK_CONCURRENCY} at a time from the bench process to the same emulator right before the run: what the machine allows at that moment (on a busy machine the emulator answers late too). Beside the time before the first send, n8n's own Edit Fields node over the same numbers reading \`={{ $json.phone }}\` per item, in a run of its own just before the bare loop: what n8n spends evaluating the expression the Send node reads per item (in n8n 2.x expressions run in an isolate), which no node can send before. Store round trips are counted inside n8n by bench/bulkSmsProbe.cjs (preloaded with \`--require\`; it wraps the installed package's methods and changes nothing they do): **record updates** = the send records' atomic updates (reserve, claim, mark sent, release; one each however often retried) ÷ numbers; **store round trips** = the Redis store's commands (TIME, reads, the compare-and-set script) and the SQLite store's transactions (with Redis only the delivery references, which live where the SMS Trigger looks: n8n's own store, here the SQLite file, and the sweep's steps, which remove the rows the SQLite rows before left to expire) ÷ numbers; beside them the SQLite tries, which count again each transaction that found the file locked by another connection (its checkpoints run on a thread of their own) and waited. **CPU per message** = the main thread's CPU time while the node's \`execute\` ran ÷ numbers (HTTP to the emulator included; the emulator's own CPU is elsewhere).

| numbers | records in | node time | floor | node ÷ floor | ideal (node ÷ ideal) | before the first send | send span | after the last send | record updates per send | store round trips per send | node's CPU per message | usage counting | run |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}
${BULK_END}`;
}
