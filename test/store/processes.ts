/** Starts test scripts (test/store/racer.ts and others) in separate OS processes and reads what they print. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';

const RACER = join(__dirname, 'racer.ts');
const ROOT = join(__dirname, '..', '..');

export interface Racer {
	child: ChildProcessWithoutNullStreams;
	/** Resolves with the next line the process prints. */
	nextLine: () => Promise<string>;
	/** Resolves when the process has ended (rejects when it failed). */
	ended: Promise<void>;
}

/** One racer process (test/store/racer.ts), run by `node` (this test's Node by default). */
export function startRacer(args: string[], node = process.execPath): Racer {
	return startScript(RACER, args, { node });
}

/** A TypeScript file of the tests in an OS process of its own (this test's Node, through tsx). */
export function startScript(script: string, args: string[], options: { node?: string; env?: NodeJS.ProcessEnv } = {}): Racer {
	const child = spawn(options.node ?? process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
	const lines: string[] = [];
	const waiting: Array<(line: string) => void> = [];
	let buffered = '';
	let stderr = '';
	child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
		buffered += chunk;
		for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
			const line = buffered.slice(0, end);
			buffered = buffered.slice(end + 1);
			const reader = waiting.shift();
			if (reader) reader(line);
			else lines.push(line);
		}
	});
	child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
	const ended = new Promise<void>((resolve, reject) =>
		child.on('exit', (code) => {
			child.stdin.destroy();
			if (code === 0) resolve();
			else reject(new Error(`racer ended with ${code}: ${stderr}`));
		}),
	);
	ended.catch(() => undefined);
	const nextLine = () => {
		const line = lines.shift();
		if (line !== undefined) return Promise.resolve(line);
		return Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), ended.then(() => Promise.reject(new Error(`racer ended without a line: ${stderr}`)))]);
	};
	return { child, nextLine, ended };
}

/**
 * Two processes increment `key` `count` times each, started together once both are ready;
 * returns every value they wrote.
 */
export async function raceTwoProcesses(kind: 'redis' | 'sqlite', target: string, key: string, count: number, node?: string): Promise<number[]> {
	const racers = [startRacer([kind, target, key, String(count)], node), startRacer([kind, target, key, String(count)], node)];
	for (const racer of racers) expect(await racer.nextLine()).toBe('ready');
	for (const racer of racers) racer.child.stdin.write('go\n');
	const written = await Promise.all(racers.map(async (racer) => JSON.parse(await racer.nextLine()) as number[]));
	await Promise.all(racers.map((racer) => racer.ended));
	return written.flat();
}
