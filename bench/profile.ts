/**
 * `npm run bench:profile`: where the CPU of section 4 goes. Runs the Telephone node over 5,000
 * lookups at 0 ms latency (after a warm-up) under node's own sampling profiler (node:inspector,
 * the same as `--cpu-prof`), writes bench/results/overhead.cpuprofile (open it in Chrome DevTools),
 * and prints the functions with the most self time, grouped by where their code lives.
 * PROFILE_ITEMS sets the item count; PROFILE_KIND=engineOnly profiles n8n's engine alone, PROFILE_KIND=bare
 * the bare undici loop. PROFILE_FILE=<file.cpuprofile> only summarizes a profile taken elsewhere
 * (e.g. the SMS node's run in real n8n, BULK_PROFILE in bench/bulkSms.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

import { bareLoop } from './bareLoop';
import { startEmulatorProcess } from './gateway';
import { phones } from './inputs';
import { runLookups } from './lookups';
import { RESULTS } from './report';

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string; lineNumber: number };
	hitCount?: number;
	children?: number[];
}

/** Which part of the stack a script belongs to, for the summary. */
function areaOf(url: string): string {
	if (url.includes('/dist/nodes/')) return 'package';
	const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
	if (module) return module[1];
	if (url.startsWith('node:')) return 'node';
	return url ? 'other' : 'native';
}

function summarize(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, top = 40) {
	const total = profile.samples.length;
	const self = new Map<string, number>();
	const byArea = new Map<string, number>();
	for (const node of profile.nodes) {
		const hits = node.hitCount ?? 0;
		if (hits === 0) continue;
		const { functionName, url, lineNumber } = node.callFrame;
		const where = url.replace(/^.*\/(node_modules|dist)\//, '$1/');
		const key = `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`;
		self.set(key, (self.get(key) ?? 0) + hits);
		const area = areaOf(url);
		byArea.set(area, (byArea.get(area) ?? 0) + hits);
	}
	const share = (hits: number) => `${((hits / total) * 100).toFixed(1).padStart(5)}%`;
	console.log(`\n${total} samples. Self time by area:`);
	for (const [area, hits] of [...byArea].sort((a, b) => b[1] - a[1])) console.log(`${share(hits)}  ${area}`);
	console.log(`\nTop ${top} functions by self time:`);
	for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(hits)}  ${key}`);
}

async function main() {
	if (process.env.PROFILE_FILE) return summarize(JSON.parse(readFileSync(process.env.PROFILE_FILE, 'utf8')), Number(process.env.PROFILE_TOP ?? 40));
	const count = Number(process.env.PROFILE_ITEMS ?? 5000);
	const kind = process.env.PROFILE_KIND === 'engineOnly' || process.env.PROFILE_KIND === 'bare' ? process.env.PROFILE_KIND : 'telephone';
	const emulator = await startEmulatorProcess();
	const session = new Session();
	try {
		const credentials = { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, maxConcurrent: 10 };
		const run = async (tels: string[]) => {
			const cpuBefore = process.cpuUsage();
			if (kind === 'bare') await bareLoop(emulator.url, emulator.demo.memberAppCode, tels);
			else if ((await runLookups(kind, tels, credentials)).failedItems > 0) throw new Error('lookups failed');
			const cpu = process.cpuUsage(cpuBefore);
			return (cpu.user + cpu.system) / 1000;
		};
		await run(phones(count + 1000).slice(count));
		session.connect();
		await session.post('Profiler.enable');
		await session.post('Profiler.setSamplingInterval', { interval: 100 });
		await session.post('Profiler.start');
		const cpuMs = await run(phones(count));
		const { profile } = await session.post('Profiler.stop');
		console.log(`${kind}: ${count} items, ${((cpuMs / count) * 1000).toFixed(0)} µs CPU per item (profiler on)`);
		const path = join(RESULTS, `${kind}.cpuprofile`);
		writeFileSync(path, JSON.stringify(profile));
		summarize(profile as never);
		console.log(`\nProfile: ${path}`);
	} finally {
		session.disconnect();
		await emulator.stop();
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
