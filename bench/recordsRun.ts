/**
 * One store's run of section 9, in a process of its own (bench/records.ts starts it): 20,000 sends
 * through the built SMS node in executions of 500, the records in whatever store the node opens
 * here (the credential's Redis, the SQLite file DATA_GATEWAY_STORE_FILE names, or process memory
 * on a Node without node:sqlite). Prints its StoreRun as the last line of stdout.
 */
import { statSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

// The built package, as users run it (npm run bench builds first); its send records are timed here.
import { DataGatewaySms } from '../dist/nodes/DataGatewaySms/DataGatewaySms.node.js';
import { nodeSqlite } from '../dist/nodes/shared/store/hostEnvironment.js';
import { parseRedisUrl, SharedRedis } from '../dist/nodes/shared/store/redis/connection.js';
import { MemoryStore } from '../dist/nodes/shared/store/memoryStore.js';
import { RedisDurableStore } from '../dist/nodes/shared/store/redisStore.js';
import { SendRecords } from '../dist/nodes/shared/store/sendRecords/sendRecords.js';
import { SqliteDurableStore } from '../dist/nodes/shared/store/sqliteStore.js';
import { closeAllRedis, forgetAllExecutionMemory } from '../dist/nodes/shared/testing.js';
import { codeVariable, sendParameters } from '../test/harness/sms';
import { runWorkflow } from '../test/harness/workflow';
import type { EmulatorProcess } from './gateway';
import { RECORDS_BATCH, RECORDS_SENDS, RECORDS_WARM_UP, type RecordsChildInput, type StoreRun } from './recordsShape';
import { runChild } from './child';

/**
 * The records at work: from the moment one of their calls starts until none is in progress (the
 * send path claims items concurrently, so the calls' own times would count the overlap many times).
 */
const records = { busyMs: 0, active: 0, since: 0, storeKind: '' };

function timeRecords() {
	const prototype = SendRecords.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
	for (const method of ['reserve', 'claim', 'markSent', 'release']) {
		const original = prototype[method];
		prototype[method] = async function (this: { store: { kind: string } }, ...args: unknown[]) {
			records.storeKind = this.store.kind;
			if (records.active++ === 0) records.since = performance.now();
			try {
				return await original.apply(this, args);
			} finally {
				if (--records.active === 0) records.busyMs += performance.now() - records.since;
			}
		};
	}
}

/**
 * The longest synchronous step of a store, which holds n8n's event loop for all its time: an
 * SQLite transaction (`attempt`), a memory update (synchronous to its end), the part of a Redis
 * update before its round trip. Wall time, and the main thread's CPU time (the difference is time
 * the OS gave other processes).
 */
const storeStep = { wallMs: 0, cpuMs: 0 };
/** process.threadCpuUsage (Node 23.9+; this run is on a Node with node:sqlite), not yet in the project's Node types. */
const threadCpuMs = () => {
	const usage = (process as unknown as { threadCpuUsage: () => NodeJS.CpuUsage }).threadCpuUsage();
	return (usage.user + usage.system) / 1000;
};

/**
 * Load-independent counts: the send records' store updates (SendRecords' own `update`, once per
 * update however often the store retries it), and for Redis the commands its store sent (TIME,
 * MGET, the compare-and-set script; in this run only the records use the Redis store).
 */
const storeCalls = { updates: 0, redisCommands: 0 };

function countStoreCalls() {
	const counted: Array<[object, string, keyof typeof storeCalls]> = [
		[SendRecords.prototype, 'update', 'updates'],
		[RedisDurableStore.prototype, 'call', 'redisCommands'],
	];
	for (const [prototype, method, count] of counted) {
		const methods = prototype as Record<string, (...args: unknown[]) => unknown>;
		const original = methods[method];
		methods[method] = function (this: unknown, ...args: unknown[]) {
			storeCalls[count]++;
			return original.apply(this, args);
		};
	}
}

/** Only the steps of the store under test: in the Redis run, the delivery references' SQLite file (sendsByTask.ts) is not the send records'. */
function timeStoreSteps(kind: string) {
	const steps: Array<[object, string]> = [
		[SqliteDurableStore.prototype, 'attempt'],
		[MemoryStore.prototype, 'update'],
		[RedisDurableStore.prototype, 'update'],
	];
	for (const [prototype, method] of steps) {
		const methods = prototype as Record<string, (...args: unknown[]) => unknown>;
		const original = methods[method];
		methods[method] = function (this: { kind?: string }, ...args: unknown[]) {
			if (this.kind !== kind) return original.apply(this, args);
			const started = performance.now();
			const cpuStarted = threadCpuMs();
			try {
				return original.apply(this, args);
			} finally {
				const wallMs = performance.now() - started;
				if (wallMs > storeStep.wallMs) Object.assign(storeStep, { wallMs, cpuMs: threadCpuMs() - cpuStarted });
			}
		};
	}
}

/** CPU seconds the redis-server has used (INFO cpu); 0 for stores without a server. */
function serverCpuSecondsOf(input: RecordsChildInput): () => Promise<number> {
	if (input.store !== 'Redis') return async () => 0;
	const inspector = new SharedRedis(parseRedisUrl(input.redisUrl as string));
	return async () => {
		const info = String(await inspector.command('INFO', ['cpu']));
		return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
	};
}

/** Bytes the store holds now: Redis's used memory, the SQLite file with its WAL moved in, or the JS heap after a collection. */
function storedBytesOf(input: RecordsChildInput): () => Promise<number> {
	if (input.store === 'Redis') {
		const inspector = new SharedRedis(parseRedisUrl(input.redisUrl as string));
		return async () => Number(/used_memory:(\d+)/.exec(String(await inspector.command('INFO', ['memory'])))?.[1] ?? 0);
	}
	if (input.store === 'SQLite') {
		const file = process.env.DATA_GATEWAY_STORE_FILE as string;
		return async () => {
			const database = new (nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>).DatabaseSync(file);
			database.exec('PRAGMA wal_checkpoint(TRUNCATE)');
			database.close();
			return statSync(file).size;
		};
	}
	const gc = (globalThis as { gc?: () => void }).gc;
	if (!gc) throw new Error('the memory store run needs --expose-gc');
	return async () => {
		// Execution memory ends with its execution in n8n; only the durable store should stay.
		forgetAllExecutionMemory();
		gc();
		return process.memoryUsage().heapUsed;
	};
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const longest = (steps: Array<typeof storeStep>) => steps.reduce((most, step) => (step.wallMs > most.wallMs ? step : most));
const phoneOf = (index: number) => `137${String(index).padStart(8, '0')}`;

async function main(input: RecordsChildInput): Promise<StoreRun> {
	timeRecords();
	timeStoreSteps(({ SQLite: 'sqlite', Redis: 'redis', memory: 'memory' } as const)[input.store]);
	countStoreCalls();
	const emulator = { url: input.emulatorUrl, demo: input.demo } as EmulatorProcess;
	const sms = new DataGatewaySms();
	const parameters = sendParameters(emulator, { variables: codeVariable('={{ $json.code }}'), sendOptions: { repeatWindowMinutes: 10 } });
	const credentials = { dataGatewayApi: { appCodeSecret: input.demo.memberAppCode, baseUrl: input.emulatorUrl, ...(input.redisUrl ? { sharedLimitRedisUrl: input.redisUrl } : {}) } };
	const run = async (items: Array<{ phone: string; code: string }>, executionId: string) => {
		const result = await runWorkflow({ steps: [{ name: 'SMS', type: sms, parameters, settings: { continueOnFail: true } }], items, credentials, executionId });
		if (result.error) throw new Error(`${executionId} failed: ${result.error.message}`);
		const output = result.json();
		return { sent: output.filter((item) => typeof item.taskId === 'string').length, failed: output.filter((item) => item.error !== undefined).length };
	};
	const storedBytes = storedBytesOf(input);
	const serverCpuSeconds = serverCpuSecondsOf(input);

	// Not timed: opens the store and warms the code up, so the first figure is an empty store's, not a cold start's.
	await run(Array.from({ length: RECORDS_WARM_UP }, (_, index) => ({ phone: `136${String(index).padStart(8, '0')}`, code: '1357' })), 'bench-records-warm-up');
	const bytesBefore = await storedBytes();
	const perSend: number[] = [];
	const wallPerSend: number[] = [];
	const processBlocks: number[] = [];
	const storeSteps: Array<typeof storeStep> = [];
	let sends = 0;
	let failedItems = 0;
	const started = performance.now();
	const cpuStarted = process.cpuUsage();
	Object.assign(storeCalls, { updates: 0, redisCommands: 0 });
	const serverCpuStarted = await serverCpuSeconds();
	for (let batch = 0; batch < RECORDS_SENDS / RECORDS_BATCH; batch++) {
		const items = Array.from({ length: RECORDS_BATCH }, (_, index) => ({ phone: phoneOf(batch * RECORDS_BATCH + index), code: '2468' }));
		const whole = monitorEventLoopDelay({ resolution: 1 });
		records.busyMs = 0;
		Object.assign(storeStep, { wallMs: 0, cpuMs: 0 });
		whole.enable();
		const batchStarted = performance.now();
		const outcome = await run(items, `bench-records-${batch}`);
		wallPerSend.push((performance.now() - batchStarted) / RECORDS_BATCH);
		whole.disable();
		processBlocks.push(whole.max / 1e6);
		storeSteps.push({ ...storeStep });
		perSend.push(records.busyMs / RECORDS_BATCH);
		sends += outcome.sent;
		failedItems += outcome.failed;
	}
	const totalSeconds = (performance.now() - started) / 1000;
	const cpu = process.cpuUsage(cpuStarted);
	const processCpuMsPerSend = (cpu.user + cpu.system) / 1000 / RECORDS_SENDS;
	const serverCpuMsPerSend = (((await serverCpuSeconds()) - serverCpuStarted) * 1000) / RECORDS_SENDS;
	const bytesPerNumber = ((await storedBytes()) - bytesBefore) / RECORDS_SENDS;
	closeAllRedis();
	// Medians of three executions: on a shared machine one execution can lose the CPU.
	return {
		store: input.store,
		storeKind: records.storeKind,
		node: process.version,
		firstMsPerSend: median(perSend.slice(0, 3)),
		lastMsPerSend: median(perSend.slice(-3)),
		firstWallMsPerSend: median(wallPerSend.slice(0, 3)),
		lastWallMsPerSend: median(wallPerSend.slice(-3)),
		lastStoreStep: longest(storeSteps.slice(-3)),
		runStoreStep: longest(storeSteps),
		lastProcessBlockMs: Math.max(...processBlocks.slice(-3)),
		bytesPerNumber,
		processCpuMsPerSend,
		serverCpuMsPerSend,
		updatesPerSend: storeCalls.updates / RECORDS_SENDS,
		redisCommandsPerSend: storeCalls.redisCommands / RECORDS_SENDS,
		sends,
		failedItems,
		totalSeconds,
	};
}

runChild(main);
