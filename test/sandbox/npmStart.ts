/** `npm start` as a terminal runs it, for the suites that drive the sandbox (test:sandbox, test:editor). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort, REPO_ROOT } from '../../scripts/n8n-runtime';
import { READY_LINE } from '../../scripts/sandbox';

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
/** Resolves 'timeout' after ms without keeping the process alive. */
export const timeout = (ms: number) => new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), ms).unref());

export interface NpmStart {
	process: ChildProcess;
	output(): string;
	exited: Promise<number | null>;
}

export interface SandboxSetting {
	env: NodeJS.ProcessEnv;
	sandboxDir: string;
	n8nPort: number;
	emulatorPort: number;
}

/**
 * A new sandbox folder and free ports for `npm start`, its emulator's reviews and deliveries quick
 * and never failing, and no real gateway even when the caller's environment names one.
 */
export async function newSandbox(folderPrefix: string): Promise<SandboxSetting> {
	const sandboxDir = mkdtempSync(join(tmpdir(), folderPrefix));
	const n8nPort = await freePort();
	const emulatorPort = await freePort();
	const env: NodeJS.ProcessEnv = {
		...process.env,
		N8N_PORT: String(n8nPort),
		EMULATOR_PORT: String(emulatorPort),
		SANDBOX_DIR: sandboxDir,
		EMULATOR_REVIEW_DELAY_MS: '500',
		EMULATOR_DELIVERY_DELAY_MS: '500',
		EMULATOR_FAILURE_SHARE: '0',
	};
	delete env.GATEWAY_BASE_URL;
	delete env.GATEWAY_APP_CODE;
	return { env, sandboxDir, n8nPort, emulatorPort };
}

/** `npm start` in its own process group, as a terminal runs it (so Ctrl-C can be sent to the group). */
export function npmStart(env: NodeJS.ProcessEnv, args: string[] = []): NpmStart {
	const child = spawn('npm', ['start', ...(args.length ? ['--', ...args] : [])], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
	let output = '';
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
	return { process: child, output: () => output, exited };
}

export async function waitReady(start: NpmStart, timeoutMs = 20 * 60_000) {
	let exitCode: number | null | undefined;
	void start.exited.then((code) => (exitCode = code));
	const deadline = Date.now() + timeoutMs;
	while (!start.output().includes(READY_LINE)) {
		if (exitCode !== undefined) throw new Error(`npm start exited (${exitCode}) before it was ready:\n${start.output().slice(-4000)}`);
		if (Date.now() > deadline) throw new Error(`npm start not ready in ${timeoutMs / 1000} s:\n${start.output().slice(-4000)}`);
		await sleep(250);
	}
}

/** Ctrl-C in a terminal: SIGINT to the whole foreground group. */
export async function pressCtrlC(start: NpmStart): Promise<{ code: number | null; after: string }> {
	const before = start.output().length;
	process.kill(-(start.process.pid as number), 'SIGINT');
	const code = await Promise.race([start.exited, timeout(60_000)]);
	if (code === 'timeout') {
		process.kill(-(start.process.pid as number), 'SIGKILL');
		throw new Error(`npm start did not stop within 60 s of Ctrl-C:\n${start.output().slice(-3000)}`);
	}
	return { code, after: start.output().slice(before) };
}

/** Stops what is still running (after a failure), giving each 30 s. */
export async function stopAll(running: NpmStart[]) {
	for (const start of running) {
		if (start.process.exitCode === null && start.process.signalCode === null) {
			try {
				process.kill(-(start.process.pid as number), 'SIGINT');
			} catch {
				// Already gone.
			}
			await Promise.race([start.exited, timeout(30_000)]);
		}
	}
}
