/**
 * Section 11's run, in a process of its own (bench/month.ts starts it on a Node with node:sqlite):
 * a month of a daily job through the built nodes in n8n-core's engine, on the SQLite store
 * DATA_GATEWAY_STORE_FILE names. The store's clock (hostClock) moves through each day's job and a
 * day at a time; a sweep pass runs between the job's parts and at the next day's 10:00, as the
 * store's minute timer would have meanwhile. Prints its MonthRun as the last line of stdout.
 *
 * A day (China time): Send at 10:00, 10:05, 10:10 and 10:15 (500 numbers each, none texted before);
 * Opt-Out Check of 500 numbers at 10:20 (100 on the list); violation queries with Reuse Answers For
 * 24 h at 10:30 (1,500 new, 500 asked yesterday at 10:30: 24 h old, expired and paid again, 500
 * asked yesterday at 14:00: reused) and at 14:00 (2,000 new, 500 of this morning's: reused).
 */
import { readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import type { IDataObject, INodeParameters, INodeType } from 'n8n-workflow';

// The built package, as users run it (npm run bench builds first).
import { DataGatewaySms } from '../dist/nodes/DataGatewaySms/DataGatewaySms.node.js';
import { DataGatewayVehicle } from '../dist/nodes/DataGatewayVehicle/DataGatewayVehicle.node.js';
import { hostClock } from '../dist/nodes/shared/store/hostClock.js';
import { openDurableStore } from '../dist/nodes/shared/store/openStore.js';
import { SqliteDurableStore } from '../dist/nodes/shared/store/sqliteStore.js';
import { codeVariable, sendParameters } from '../test/harness/sms';
import { runWorkflow } from '../test/harness/workflow';
import { manyPlate } from './inputs';
import { MONTH_CHECKS, MONTH_LOOKUPS, MONTH_OPTED_OUT, MONTH_SEND_BATCH, MONTH_SENDS, type MonthChildInput, type MonthDay, type MonthRun, ownMs, type SweepSlice } from './monthShape';
import { runChild } from './child';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** Day 1, 00:00 China time (UTC+8). */
const DAY_ONE = Date.UTC(2026, 0, 1) - 8 * 60 * MINUTE;
const at = (day: number, hour: number, minute = 0) => DAY_ONE + (day - 1) * DAY + (hour * 60 + minute) * MINUTE;

/** This (the main) thread's time on a CPU and waiting for one, in ms (Linux /proc/<pid>/task/<pid>/schedstat, in ns). */
const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;
const schedMs = (): { onCpu: number; queued: number } => {
	try {
		const [onCpu, queued] = readFileSync(SCHEDSTAT, 'utf8').split(' ').map(Number);
		return { onCpu: onCpu / 1e6, queued: queued / 1e6 };
	} catch {
		return { onCpu: Number.NaN, queued: Number.NaN };
	}
};

const zero = (): SweepSlice => ({ wallMs: 0, cpuMs: 0, queuedMs: 0 });
const none = () => ({ longest: zero(), own: zero() });
/** The sweep's synchronous slices, longest by wall time and by own time: of the passes this run asks for, and of the store's own timer. */
const slices = { explicit: false, asked: none(), timer: none() };

/** Times every synchronous slice of the sweep: a step's transaction and a step giving free pages back (sqliteStore.ts). */
function timeSweepSlices() {
	const prototype = SqliteDurableStore.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
	const attempt = prototype.attempt;
	prototype.attempt = function (this: unknown, what: unknown, ...rest: unknown[]) {
		if (what !== 'sweeping' && what !== 'giving free pages back') return attempt.call(this, what, ...rest);
		const sched = schedMs();
		const started = performance.now();
		try {
			return attempt.call(this, what, ...rest);
		} finally {
			const wallMs = performance.now() - started;
			const after = schedMs();
			const slice = { wallMs, cpuMs: after.onCpu - sched.onCpu, queuedMs: after.queued - sched.queued };
			const kept = slices.explicit ? slices.asked : slices.timer;
			if (wallMs > kept.longest.wallMs) kept.longest = slice;
			if (ownMs(slice) > ownMs(kept.own)) kept.own = slice;
		}
	};
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sizeOf = (path: string) => {
	try {
		return statSync(path).size;
	} catch {
		return 0;
	}
};
const sendPhone = (index: number) => `137${String(index).padStart(8, '0')}`;
const listedPhone = (index: number) => `135${String(index).padStart(8, '0')}`;

type Pass = Awaited<ReturnType<Month['moveTo']>>;

/** The nodes, the store and its clock for the month. */
class Month {
	now = at(0, 10);
	private readonly credentials: { dataGatewayApi: { appCodeSecret: string; baseUrl: string } };
	private readonly sms = new DataGatewaySms();
	private readonly vehicle = new DataGatewayVehicle();
	private readonly send: INodeParameters;
	private readonly lookup = { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', options: { reuseAnswersHours: 24 } };
	readonly listed = Array.from({ length: MONTH_OPTED_OUT }, (_, index) => ({ phone: listedPhone(index) }));
	private plates = 0;
	/** The new plates of yesterday's morning and afternoon queries. */
	private yesterday = { morning: [] as string[], afternoon: [] as string[] };

	constructor(
		private readonly input: MonthChildInput,
		private readonly store: SqliteDurableStore,
	) {
		hostClock.now = () => this.now;
		this.credentials = { dataGatewayApi: { appCodeSecret: input.demo.memberAppCode, baseUrl: input.emulatorUrl } };
		this.send = sendParameters(input, { variables: codeVariable('={{ $json.code }}') });
	}

	async admin(method: string, path: string): Promise<unknown> {
		return await (await fetch(`${this.input.emulatorUrl}/__emulator/${path}`, { method })).json();
	}

	async calls(): Promise<number> {
		return ((await this.admin('GET', 'ledger')) as { totals: { calls: number } }).totals.calls;
	}

	async run(kind: 'send' | 'lookup' | 'optOutAdd' | 'optOutCheck', items: IDataObject[], executionId: string) {
		const [type, parameters]: [INodeType, INodeParameters] =
			kind === 'lookup' ? [this.vehicle, this.lookup] : [this.sms, kind === 'send' ? this.send : { resource: 'optOut', operation: kind === 'optOutAdd' ? 'add' : 'check', phone: '={{ $json.phone }}' }];
		const result = await runWorkflow({ steps: [{ name: 'Node', type, parameters, settings: { continueOnFail: true } }], items, credentials: this.credentials, executionId });
		if (result.error) throw new Error(`${executionId} failed: ${result.error.message}`);
		const output = result.json();
		return { output, nodeMs: result.run.data.resultData.runData.Node?.[0]?.executionTime ?? Number.NaN, failed: output.filter((item) => item.error !== undefined).length };
	}

	/** Day 0, untimed: the opt-out list, and every path once (a process's first run also compiles n8n's engine and the package). */
	async warmUp(): Promise<void> {
		await this.run('optOutAdd', this.listed, 'month-opt-out');
		await this.run('send', Array.from({ length: 100 }, (_, index) => ({ phone: `136${String(index).padStart(8, '0')}`, code: '1357' })), 'month-warm-up-send');
		await this.run('lookup', Array.from({ length: 100 }, (_, index) => ({ plate: manyPlate(1_000_000 + index) })), 'month-warm-up-lookup');
		await this.run('optOutCheck', this.listed.slice(0, 50), 'month-warm-up-check');
	}

	/** Moves the store's clock and runs a sweep pass, as the store's minute timer would have meanwhile. */
	async moveTo(instant: number) {
		this.now = instant;
		const delay = monitorEventLoopDelay({ resolution: 1 });
		slices.asked = none();
		slices.explicit = true;
		delay.enable();
		const started = performance.now();
		const pass = await this.store.sweepNow();
		const ms = performance.now() - started;
		delay.disable();
		slices.explicit = false;
		return { rows: pass.removed, ms, slice: slices.asked.longest, ownSlice: slices.asked.own, delayMs: delay.max / 1e6 };
	}

	/** The day's sends, 10:00 to 10:15: time per send (median of the executions), CPU per send, the numbers. */
	async sends(day: number) {
		const perSend: number[] = [];
		const numbers: string[] = [];
		let cpuMs = 0;
		let sent = 0;
		let failed = 0;
		for (let batch = 0; batch < MONTH_SENDS / MONTH_SEND_BATCH; batch++) {
			this.now = at(day, 10, 5 * batch);
			const items = Array.from({ length: MONTH_SEND_BATCH }, (_, index) => ({ phone: sendPhone((day - 1) * MONTH_SENDS + batch * MONTH_SEND_BATCH + index), code: '2468' }));
			numbers.push(...items.map((item) => item.phone));
			const cpu = process.cpuUsage();
			const result = await this.run('send', items, `month-${day}-send-${batch}`);
			const used = process.cpuUsage(cpu);
			cpuMs += (used.user + used.system) / 1000;
			perSend.push(result.nodeMs / MONTH_SEND_BATCH);
			sent += result.output.filter((item) => typeof item.taskId === 'string').length;
			failed += result.failed;
		}
		return { msPerSend: median(perSend), cpuMsPerSend: cpuMs / MONTH_SENDS, sent, failed, numbers };
	}

	/** The day's queries at 10:30 and 14:00, each after a pass; yesterday's 10:30 ones are 24 h old (expired), its 14:00 ones 20.5 h (reused). */
	async lookups(day: number, passes: Pass[]) {
		const repeats = MONTH_LOOKUPS / 10;
		const callsBefore = await this.calls();
		passes.push(await this.moveTo(at(day, 10, 30)));
		const fromYesterday = [...this.yesterday.morning.slice(0, repeats), ...this.yesterday.afternoon.slice(0, repeats)];
		const morningNew = this.newPlates(MONTH_LOOKUPS / 2 - fromYesterday.length);
		const morning = await this.run('lookup', [...morningNew, ...fromYesterday].map((plate) => ({ plate })), `month-${day}-morning`);
		passes.push(await this.moveTo(at(day, 14)));
		const afternoonNew = this.newPlates(MONTH_LOOKUPS / 2 - repeats);
		const afternoon = await this.run('lookup', [...afternoonNew, ...morningNew.slice(0, repeats)].map((plate) => ({ plate })), `month-${day}-afternoon`);
		this.yesterday = { morning: morningNew, afternoon: afternoonNew };
		const reused = [morning, afternoon].reduce((sum, result) => sum + result.output.filter((item) => item.reused === true).length, 0);
		return { paidLookups: (await this.calls()) - callsBefore, reused, failed: morning.failed + afternoon.failed };
	}

	private newPlates(count: number): string[] {
		return Array.from({ length: count }, () => manyPlate(this.plates++));
	}
}

const bytesOf = (file: string) => sizeOf(file) + sizeOf(`${file}-wal`);

/** A day from 10:00 (the clock is there: the night's pass before moved it) to the next day's 10:00 and its pass. */
async function runDay(month: Month, day: number, file: string): Promise<MonthDay> {
	await month.admin('POST', 'reset');
	slices.timer = none();
	const sends = await month.sends(day);
	const passes = [await month.moveTo(at(day, 10, 20))];
	const checks = [...month.listed.slice(0, MONTH_CHECKS / 5), ...sends.numbers.slice(0, MONTH_CHECKS - MONTH_CHECKS / 5).map((phone) => ({ phone }))];
	const checked = await month.run('optOutCheck', checks, `month-${day}-check`);
	const lookups = await month.lookups(day, passes);
	const bytesAfterJob = bytesOf(file);
	const fileBytesAfterJob = sizeOf(file);
	const night = await month.moveTo(at(day + 1, 10));
	passes.push(night);
	return {
		day,
		bytesAfterJob,
		fileBytesAfterJob,
		bytesAfterNight: bytesOf(file),
		msPerSend: sends.msPerSend,
		cpuMsPerSend: sends.cpuMsPerSend,
		sent: sends.sent,
		paidLookups: lookups.paidLookups,
		reused: lookups.reused,
		failed: sends.failed + checked.failed + lookups.failed,
		optedOutFound: checked.output.filter((item) => item.optedOut === true).length,
		nightRows: night.rows,
		nightMs: night.ms,
		nightSlice: night.slice,
		nightDelayMs: night.delayMs,
		passRows: passes.reduce((sum, pass) => sum + pass.rows, 0),
		passSlice: passes.reduce((most, pass) => (pass.slice.wallMs > most.wallMs ? pass.slice : most), zero()),
		passOwnSlice: passes.reduce((most, pass) => (ownMs(pass.ownSlice) > ownMs(most) ? pass.ownSlice : most), zero()),
		passDelayMs: Math.max(...passes.map((pass) => pass.delayMs)),
		timerSlice: slices.timer.longest,
		timerOwnSlice: slices.timer.own,
		load: loadavg()[0],
	};
}

async function main(input: MonthChildInput): Promise<MonthRun> {
	timeSweepSlices();
	const file = process.env.DATA_GATEWAY_STORE_FILE as string;
	const store = await openDurableStore({ getNode: () => ({ credentials: {} }) } as never);
	if (!(store instanceof SqliteDurableStore)) throw new Error(`the nodes' store is ${store.label}, not an SQLite file: run on Node 22.13 or later`);
	const month = new Month(input, store);
	await month.warmUp();
	await month.moveTo(at(1, 10));
	const days: MonthDay[] = [];
	const started = performance.now();
	for (let day = 1; day <= input.days; day++) {
		days.push(await runDay(month, day, file));
		// Progress on stderr; the result is stdout's last line.
		console.error(JSON.stringify(days.at(-1)));
	}
	store.close();
	return { node: process.version, days, totalSeconds: (performance.now() - started) / 1000 };
}

runChild(main);
