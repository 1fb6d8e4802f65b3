/**
 * Preloaded (`node --require`) into the `n8n execute` process of bench/bulkSms.ts. When n8n loads
 * the installed package's files, it wraps, without changing what they do:
 * - the usage step (usage/runUsage.js countRunUsage, which the router calls through its module's
 *   exports), to take its wall time;
 * - the SMS node's `execute`, to take the main thread's CPU time while the node runs, and when the
 *   send records' reserve (after every item is read and checked) began and ended;
 * - SendRecords' `update` (one atomic store update of the send records, however often retried),
 *   the SQLite store's transactions (and its tries of them while the file was busy) and the Redis
 *   store's commands, to count the store round trips.
 * Writes the figures as JSON to DGW_BULK_PROBE_OUT when the process exits. With DGW_BULK_PROFILE
 * set to a file name, the node's run is also profiled (node:inspector, as --cpu-prof) into that file,
 * and the figures are written beside it (their monotonicUs stamps split the profile by phase). With
 * DGW_BULK_SPANS set, it also sums the round trips of the claims, the paid calls, the Redis store's
 * updates and each Redis script (by its key count), and n8n's event-loop delay while the sends go out.
 * Plain CommonJS: it runs inside n8n's own Node, before any loader.
 */
const Module = require('node:module');
const { writeFileSync } = require('node:fs');

const out = process.env.DGW_BULK_PROBE_OUT;
const PACKAGE_DIST = '/n8n-nodes-data-gateway/dist/nodes/';
const profileFile = process.env.DGW_BULK_PROFILE;
const figures = { usageMs: 0, executeCpuMs: 0, executeWallMs: 0, executes: 0, recordUpdates: 0, sqliteTransactions: 0, sqliteAttempts: 0, redisCommands: 0, executeStartedAt: 0, reserveStartedAt: 0, reserveEndedAt: 0, sqliteByWhat: {}, monotonicUs: {}, spans: {} };

/** Epoch ms of the first call of an async method, and of its end. */
function stamp(prototype, method, started, ended) {
	const original = prototype[method];
	prototype[method] = async function (...args) {
		if (!figures[started]) {
			figures[started] = performance.timeOrigin + performance.now();
			figures.monotonicUs[started] = Number(process.hrtime.bigint() / 1000n);
		}
		try {
			return await original.apply(this, args);
		} finally {
			if (!figures[ended]) {
				figures[ended] = performance.timeOrigin + performance.now();
				figures.monotonicUs[ended] = Number(process.hrtime.bigint() / 1000n);
				if (ended === 'reserveEndedAt' && process.env.DGW_BULK_SPANS) startLag();
			}
		}
	};
}

/** Sums an async method's wall time into figures.spans[name]: [calls, total ms]; `name` may be made from the call's arguments. */
function span(prototype, method, name) {
	const original = prototype[method];
	prototype[method] = async function (...args) {
		const started = performance.now();
		try {
			return await original.apply(this, args);
		} finally {
			const entry = (figures.spans[typeof name === 'function' ? name(...args) : name] ??= [0, 0]);
			entry[0]++;
			entry[1] += performance.now() - started;
		}
	};
}

/** With DGW_BULK_SPANS, n8n's event-loop delay while the sends go out (from the reserve's end to the node's). */
let lag;
function startLag() {
	lag = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 1 });
	lag.enable();
}
function stopLag() {
	if (!lag) return;
	lag.disable();
	figures.sendLagMs = { mean: lag.mean / 1e6, p50: lag.percentile(50) / 1e6, p90: lag.percentile(90) / 1e6, p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 };
	lag = undefined;
}

function count(prototype, method, figure) {
	const original = prototype[method];
	prototype[method] = function (...args) {
		figures[figure]++;
		return original.apply(this, args);
	};
}

/** Samples the main thread until `stop`, which writes the profile to DGW_BULK_PROFILE. */
async function startProfiler() {
	const { Session } = require('node:inspector/promises');
	const session = new Session();
	session.connect();
	await session.post('Profiler.enable');
	await session.post('Profiler.setSamplingInterval', { interval: 200 });
	await session.post('Profiler.start');
	return {
		stop: async () => {
			const { profile } = await session.post('Profiler.stop');
			writeFileSync(profileFile, JSON.stringify(profile));
			session.disconnect();
		},
	};
}

/** The node class, its `execute` (an instance field) timed on each instance. */
function timedNode(Original) {
	return class DataGatewaySms extends Original {
		constructor(...args) {
			super(...args);
			const execute = this.execute;
			this.execute = async function (...callArgs) {
				const profiler = profileFile ? await startProfiler() : undefined;
				const cpu = process.threadCpuUsage ? process.threadCpuUsage() : process.cpuUsage();
				const started = performance.now();
				figures.executeStartedAt = performance.timeOrigin + started;
				figures.monotonicUs.executeStartedAt = Number(process.hrtime.bigint() / 1000n);
				try {
					return await execute.apply(this, callArgs);
				} finally {
					const used = process.threadCpuUsage ? process.threadCpuUsage(cpu) : process.cpuUsage(cpu);
					figures.executeCpuMs += (used.user + used.system) / 1000;
					figures.executeWallMs += performance.now() - started;
					figures.executes++;
					figures.monotonicUs.executeEndedAt = Number(process.hrtime.bigint() / 1000n);
					stopLag();
					if (profiler) await profiler.stop();
				}
			};
		}
	};
}

const load = Module.prototype.load;
Module.prototype.load = function (filename) {
	load.call(this, filename);
	const at = filename.indexOf(PACKAGE_DIST);
	if (at < 0) return;
	const file = filename.slice(at + PACKAGE_DIST.length);
	if (file === 'DataGatewaySms/DataGatewaySms.node.js') this.exports.DataGatewaySms = timedNode(this.exports.DataGatewaySms);
	else if (file === 'shared/store/sendRecords/sendRecords.js') {
		count(this.exports.SendRecords.prototype, 'update', 'recordUpdates');
		stamp(this.exports.SendRecords.prototype, 'reserve', 'reserveStartedAt', 'reserveEndedAt');
		if (process.env.DGW_BULK_SPANS) span(this.exports.SendRecords.prototype, 'claim', 'claim');
	}
	else if (file === 'shared/store/sqliteStore.js') {
		// `use` once per transaction asked for; `attempt` again each time the file was busy (locked by another connection).
		count(this.exports.SqliteDurableStore.prototype, 'use', 'sqliteTransactions');
		// And by what the transaction was for ('writing', 'reading', 'sweeping').
		const use = this.exports.SqliteDurableStore.prototype.use;
		this.exports.SqliteDurableStore.prototype.use = function (what, ...args) {
			figures.sqliteByWhat[what] = (figures.sqliteByWhat[what] ?? 0) + 1;
			return use.call(this, what, ...args);
		};
		count(this.exports.SqliteDurableStore.prototype, 'attempt', 'sqliteAttempts');
	}
	else if (file === 'shared/usage/runUsage.js') {
		const countRunUsage = this.exports.countRunUsage;
		this.exports.countRunUsage = async function (...args) {
			const started = performance.now();
			try {
				return await countRunUsage.apply(this, args);
			} finally {
				figures.usageMs += performance.now() - started;
			}
		};
	}
	else if (file === 'shared/transport/gatewayClient.js' && process.env.DGW_BULK_SPANS) span(this.exports.GatewayClient.prototype, 'call', 'gatewayCall');
	else if (file === 'shared/store/redis/connection.js' && process.env.DGW_BULK_SPANS) span(this.exports.SharedRedis.prototype, 'runScript', (script) => `script ${script.keyCount}`);
	else if (file === 'shared/store/redisStore.js' && process.env.DGW_BULK_SPANS) {
		span(this.exports.RedisDurableStore.prototype, 'update', 'redisUpdate');
		count(this.exports.RedisDurableStore.prototype, 'call', 'redisCommands');
	}
	else if (file === 'shared/store/redisStore.js') count(this.exports.RedisDurableStore.prototype, 'call', 'redisCommands');
};

process.on('exit', () => {
	if (out) writeFileSync(out, JSON.stringify(figures));
	// Beside a profile, the phases' times, to split it by phase.
	if (profileFile) writeFileSync(`${profileFile}.probe.json`, JSON.stringify(figures));
});
