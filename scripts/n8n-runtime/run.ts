/**
 * Running an installed n8n: one-shot CLI commands (import, publish, execute) and `n8n start`
 * as a server that is waited on until it serves the editor and its production webhooks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

import type { Runtime } from './install';

/** Ports this process already handed out: the kernel may offer a just-closed port again at once. */
const handedOut = new Set<number>();

async function unusedPort(): Promise<number> {
	return await new Promise((done, fail) => {
		const server = createServer();
		server.once('error', fail);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => done(port));
		});
	});
}

/** A free loopback port, never one this process handed out before (n8n's HTTP and broker ports must differ). */
export async function freePort(): Promise<number> {
	for (;;) {
		const port = await unusedPort();
		if (handedOut.has(port)) continue;
		handedOut.add(port);
		return port;
	}
}

export interface N8nEnvironment {
	userFolder: string;
	/** Folders of built `*.node.js` / `*.credentials.js` files; their types are named `CUSTOM.<name>`. */
	customExtensions?: string[];
	/** HTTP port; a free one is picked when absent. */
	port?: number;
	/** Extra variables, applied last. */
	env?: NodeJS.ProcessEnv;
	/** Older name of `env`, still read. */
	extraEnv?: NodeJS.ProcessEnv;
}

function n8nEnv(runtime: Runtime, options: N8nEnvironment, port: number, brokerPort: number): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {
		...runtime.env(options.userFolder),
		N8N_PORT: String(port),
		// Bind to loopback only: a dev server with a known owner password should not face the network.
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		// Each process gets its own broker port, so several n8n (both lines, a command next to a server) coexist.
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
	};
	// An empty value would add '' as a folder to scan, so the variable is left out instead.
	delete env.N8N_CUSTOM_EXTENSIONS;
	if (options.customExtensions?.length) env.N8N_CUSTOM_EXTENSIONS = options.customExtensions.join(';');
	return { ...env, ...options.extraEnv, ...options.env };
}

/**
 * n8n and its task runners live in their own process group, so stopping kills the whole tree.
 * The group is then outside the terminal's Ctrl-C, so this process forwards its own end to them.
 */
const liveGroups = new Set<number>();
let exitHooksInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals) {
	try {
		process.kill(-pid, signal);
	} catch {
		// Already gone.
	}
}

/**
 * n8n handles only its first SIGTERM gracefully (a second one kills it mid-shutdown), and a
 * Ctrl-C under npm arrives twice (from the terminal and forwarded by npm): one SIGTERM per group.
 */
const terminatedGroups = new Set<number>();
function terminateGroup(pid: number) {
	if (terminatedGroups.has(pid)) return;
	terminatedGroups.add(pid);
	killGroup(pid, 'SIGTERM');
}

function trackGroup(pid: number) {
	liveGroups.add(pid);
	if (exitHooksInstalled) return;
	exitHooksInstalled = true;
	process.on('exit', () => liveGroups.forEach((group) => killGroup(group, 'SIGKILL')));
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		const forward = () => {
			liveGroups.forEach(terminateGroup);
			// Alone on this signal, keep Node's default of ending the process.
			if (process.listenerCount(signal) === 1) process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
		};
		process.on(signal, forward);
	}
}

function spawnN8n(runtime: Runtime, args: string[], env: NodeJS.ProcessEnv, cwd: string): ChildProcess {
	mkdirSync(cwd, { recursive: true });
	const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
	if (child.pid !== undefined) {
		const pid = child.pid;
		trackGroup(pid);
		child.once('exit', () => {
			// Sweep runners left behind by a main process that died abruptly.
			killGroup(pid, 'SIGKILL');
			liveGroups.delete(pid);
			terminatedGroups.delete(pid);
		});
	}
	return child;
}

export interface CommandResult {
	code: number;
	stdout: string;
	stderr: string;
}

/**
 * Runs one n8n CLI command (import:*, publish:workflow, execute …) to completion. Asynchronous,
 * so a server in the calling process (a gateway emulator) keeps answering meanwhile. `execute`
 * prints its result through n8n's logger, hence N8N_LOG_LEVEL=info in the defaults.
 */
export async function runN8nCommand(runtime: Runtime, args: string[], options: N8nEnvironment & { timeoutMs?: number }): Promise<CommandResult> {
	const env = n8nEnv(runtime, options, options.port ?? (await freePort()), await freePort());
	const child = spawnN8n(runtime, args, env, options.userFolder);
	let stdout = '';
	let stderr = '';
	child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
	child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
	const timer = setTimeout(() => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'), options.timeoutMs ?? 10 * 60_000);
	const code = await new Promise<number>((done) => {
		child.once('error', (error) => {
			stderr += String(error);
			done(-1);
		});
		child.once('close', (exitCode) => done(exitCode ?? -1));
	});
	clearTimeout(timer);
	return { code, stdout, stderr };
}

/** Older name of runN8nCommand. */
export const n8nCommand = runN8nCommand;

/** Marks an imported workflow active without the editor; 2.x calls it publishing, 1.x an update. */
export async function activateWorkflow(runtime: Runtime, workflowId: string, options: N8nEnvironment): Promise<CommandResult> {
	const args = runtime.line === '2' ? ['publish:workflow', `--id=${workflowId}`] : ['update:workflow', `--id=${workflowId}`, '--active=true'];
	const result = await runN8nCommand(runtime, args, options);
	if (result.code !== 0) throw new Error(`n8n ${args.join(' ')} failed (${result.code}):\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`);
	return result;
}

/** Lets a reused user folder go through owner setup again (the owner's workflows stay). */
export async function resetUserManagement(runtime: Runtime, options: N8nEnvironment): Promise<void> {
	const result = await runN8nCommand(runtime, ['user-management:reset'], options);
	if (result.code !== 0) throw new Error(`n8n user-management:reset failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
}

/**
 * Asks whether a production webhook is registered, without running its workflow: a CORS preflight
 * answers 204 for a registered path and 404 for an unknown one. (`/healthz` and the editor's
 * ready line can come before registration; 2.x activates published workflows in the background.)
 */
export async function isWebhookRegistered(baseUrl: string, path: string, method = 'POST'): Promise<boolean> {
	const response = await fetch(`${baseUrl}/${path.replace(/^\//, '')}`, {
		method: 'OPTIONS',
		headers: { origin: 'http://127.0.0.1', 'access-control-request-method': method },
	});
	await response.arrayBuffer();
	return response.status >= 200 && response.status < 300;
}

export interface StartOptions extends N8nEnvironment {
	/** Where n8n's output goes as well; defaults to <userFolder>/n8n-start.log. */
	logFile?: string;
	readyTimeoutMs?: number;
	onOutput?: (text: string) => void;
	/** Production webhook paths (e.g. `webhook/<id>/<path>`) to wait for before resolving. */
	webhookPaths?: string[];
	/** Another long-running command (`worker`, `webhook`) and the log line that says it is ready; `/healthz` on the port is awaited too. */
	command?: { args: string[]; readyLine: string };
}

export interface RunningN8n {
	url: string;
	port: number;
	process: ChildProcess;
	logFile: string;
	/** Everything n8n printed so far (the last 8 MB). */
	log(): string;
	/** Waits until a production webhook answers as registered. */
	waitForWebhook(path: string, options?: { method?: string; timeoutMs?: number }): Promise<void>;
	/** SIGTERM to n8n's process group, SIGKILL after 20 s; resolves once it has exited. */
	stop(): Promise<void>;
}

const READY_LINE = 'Editor is now accessible via';
const KEEP_LOG_CHARS = 8 * 1024 * 1024;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Starts `n8n start` and resolves once the editor (and any given webhooks) are served. A port picked
 * here can be taken by another process before n8n binds it; then n8n is started once more on new ports.
 */
export async function startN8n(runtime: Runtime, options: StartOptions): Promise<RunningN8n> {
	try {
		return await startOnce(runtime, options);
	} catch (error) {
		if (options.port !== undefined || !/port \d+ is already in use/i.test(String(error))) throw error;
		return await startOnce(runtime, options);
	}
}

async function startOnce(runtime: Runtime, options: StartOptions): Promise<RunningN8n> {
	const port = options.port ?? (await freePort());
	const url = `http://127.0.0.1:${port}`;
	const env = n8nEnv(runtime, options, port, await freePort());
	const logFile = options.logFile ?? join(options.userFolder, 'n8n-start.log');
	mkdirSync(dirname(logFile), { recursive: true });
	const file = createWriteStream(logFile, { flags: 'a' });
	const args = options.command?.args ?? ['start'];
	const readyLine = options.command?.readyLine ?? READY_LINE;
	file.write(`\n==== n8n ${runtime.version} ${args.join(' ')} on ${url} at ${new Date().toISOString()}\n`);

	const child = spawnN8n(runtime, args, env, options.userFolder);
	let output = '';
	const collect = (chunk: Buffer) => {
		const text = chunk.toString('utf8');
		file.write(chunk);
		output += text;
		if (output.length > KEEP_LOG_CHARS) output = output.slice(-KEEP_LOG_CHARS / 2);
		options.onOutput?.(text);
	};
	child.stdout?.on('data', collect);
	child.stderr?.on('data', collect);
	let exited = false;
	const exit = new Promise<void>((done) => child.once('close', () => done()));
	void exit.then(() => {
		exited = true;
		file.end();
	});

	const stop = async () => {
		if (!exited && child.pid !== undefined) {
			terminateGroup(child.pid);
			const pid = child.pid;
			const hardKill = setTimeout(() => killGroup(pid, 'SIGKILL'), 20_000);
			await exit;
			clearTimeout(hardKill);
		}
	};

	const waitForWebhook = async (path: string, waitOptions: { method?: string; timeoutMs?: number } = {}) => {
		const deadline = Date.now() + (waitOptions.timeoutMs ?? 60_000);
		while (!(await isWebhookRegistered(url, path, waitOptions.method).catch(() => false))) {
			if (exited) throw new Error(`n8n exited while waiting for webhook ${path}:\n${output.slice(-4000)}`);
			if (Date.now() > deadline) throw new Error(`webhook ${path} was not registered in time; n8n log: ${logFile}`);
			await sleep(250);
		}
	};

	try {
		const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
		const healthy = async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.ok === true;
		while (!output.includes(readyLine) || !(await healthy())) {
			if (exited) throw new Error(`n8n exited (${child.exitCode ?? child.signalCode}) before it was ready; log: ${logFile}\n${output.slice(-4000)}`);
			if (Date.now() > deadline) throw new Error(`n8n was not ready in ${Math.round((options.readyTimeoutMs ?? 180_000) / 1000)} s; log: ${logFile}\n${output.slice(-4000)}`);
			await sleep(250);
		}
		for (const path of options.webhookPaths ?? []) await waitForWebhook(path);
	} catch (error) {
		await stop();
		throw error;
	}
	return { url, port, process: child, logFile, log: () => output, waitForWebhook, stop };
}
