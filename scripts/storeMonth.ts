/**
 * `npx tsx scripts/storeMonth.ts [days]`: a month of a daily job on the SQLite store in minutes
 * (issue 36, "a store that stays small"). Each simulated day: 2,000 sends through the send records
 * (reserve, claim, mark sent, repeat window 10 min, the default per-number limits) and their
 * delivery records, and 5,000 answers kept for Reuse (24 h, ~600 bytes each); then the store's
 * clock moves a day on and one sweep pass runs, as its timer would. Prints per day the file's size
 * (with its WAL), the time per send, and the longest event-loop pause during the sweep.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import { keepAnswer } from '../nodes/shared/lookups/reuse';
import { nodeSqlite } from '../nodes/shared/store/hostEnvironment';
import { SendRecords } from '../nodes/shared/store/sendRecords/sendRecords';
import { recordSends } from '../nodes/shared/store/sendsByTask';
import { SqliteDurableStore } from '../nodes/shared/store/sqliteStore';

const DAY = 86_400_000;
const SENDS = 2_000;
const ANSWERS = 5_000;
const BATCH = 500;

function sizeOf(file: string): number {
	return [file, `${file}-wal`].reduce((total, path) => {
		try {
			return total + statSync(path).size;
		} catch {
			return total;
		}
	}, 0);
}

async function sendDay(store: SqliteDurableStore, day: number): Promise<number> {
	const started = performance.now();
	for (let start = 0; start < SENDS; start += BATCH) {
		const records = new SendRecords(store, { node: 'wf|sms', execution: `day ${day} run ${start}`, runIndex: 0 }, { limits: { perMinute: 1, perHour: 5, perDay: 10 }, repeatWindowMinutes: 10 });
		const sends = Array.from({ length: BATCH }, (_, index) => ({ itemIndex: index, phone: `137${String(day * SENDS + start + index).padStart(8, '0')}`, message: `day ${day} ${start + index}` }));
		await records.reserve(sends);
		await Promise.all(sends.map(async (send) => await records.claim(send.itemIndex)));
		await records.markSent(new Map(sends.map((send) => [send.itemIndex, `task-${day}-${start + send.itemIndex}`])));
		await recordSends(
			store,
			'account',
			sends.map((send) => ({ taskId: `task-${day}-${start + send.itemIndex}`, reference: null, workflowId: 'wf', executionId: `day ${day}` })),
		);
	}
	return (performance.now() - started) / SENDS;
}

async function main() {
	const days = Number(process.argv[2] ?? 30);
	const sqlite = nodeSqlite();
	if (!sqlite) throw new Error('needs node:sqlite (Node 22.13+)');
	const folder = mkdtempSync(join(tmpdir(), 'dgw-store-month-'));
	const file = join(folder, 'store.sqlite');
	let now = Date.UTC(2026, 0, 1, 2);
	const store = new SqliteDurableStore(sqlite, file, () => now);
	const answer = { plate: 'x'.repeat(8), violations: Array.from({ length: 4 }, (_, index) => ({ time: '2026-01-01 08:00', place: `road ${index}`, fine: 200, points: 3, text: 'y'.repeat(60) })) };
	try {
		console.log('day\tfile+WAL KB\tms per send\tsweep removed\tlongest pause ms\tlongest step rows\tstep ms median / max');
		for (let day = 1; day <= days; day++) {
			const perSend = await sendDay(store, day);
			for (let index = 0; index < ANSWERS; index++) await keepAnswer(store, `q|${day}|${index}`, answer, DAY);
			now += DAY;
			const delay = monitorEventLoopDelay({ resolution: 1 });
			delay.enable();
			const pass = await store.sweepNow();
			delay.disable();
			const looked = Math.max(...pass.steps.map((step) => step.looked));
			const stepMs = pass.steps.map((step) => step.ms).sort((a, b) => a - b);
			const median = stepMs[Math.floor(stepMs.length / 2)];
			console.log(`${day}\t${Math.round(sizeOf(file) / 1024)}\t${perSend.toFixed(3)}\t${pass.removed}\t${(delay.max / 1e6).toFixed(1)}\t${looked}\t${median.toFixed(1)} / ${stepMs[stepMs.length - 1].toFixed(1)}`);
		}
	} finally {
		store.close();
		rmSync(folder, { recursive: true, force: true });
	}
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		console.error(error);
		process.exit(1);
	},
);
