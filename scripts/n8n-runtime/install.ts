/**
 * Installs a pinned Node 24 and a pinned n8n of each line from the npm registry into a cache
 * folder, once. The recipe (and why each step is there) is in ../shared/notes/n8n-runtime.md (beside this repository).
 */
import { spawn } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..', '..');
/** N8N_RUNTIME_CACHE moves the cache (a CI cache folder, or a throwaway one to time a cold install). */
export const CACHE_DIR = process.env.N8N_RUNTIME_CACHE ? resolve(process.env.N8N_RUNTIME_CACHE) : join(REPO_ROOT, '.n8n-runtime');
export const LOG_DIR = join(CACHE_DIR, 'logs');

export const NODE24_VERSION = '24.21.0';
export type N8nLine = '2' | '1';
/** 2.41.3 needs @n8n/agents@0.26.2, which the registry here lacks; 1.123.81 is the last 1.x. */
export const N8N_VERSIONS: Record<N8nLine, string> = { '2': '2.41.0', '1': '1.123.81' };
/** Registry gaps: linkedom 0.18.15 needs a package the registry lacks; 1.x's xlsx points at a CDN tarball. */
const OVERRIDES: Record<N8nLine, Record<string, string>> = {
	'2': { linkedom: '0.18.12' },
	'1': { linkedom: '0.18.12', xlsx: '0.18.5' },
};
/** The only native modules n8n needs to start and evaluate expressions; everything else stays unbuilt. */
const NATIVE_MODULES = ['sqlite3', 'isolated-vm'];
/** Older caches wrote this name; a JSON body (or a bare version for Node) is accepted. */
const MARKER = '.ready';

export type Log = (line: string) => void;

export interface Runtime {
	line: N8nLine;
	version: string;
	/** Node 24 binary; run n8n as `nodeBin n8nBin <command>`. */
	nodeBin: string;
	/** n8n's bin script (a plain JS file). */
	n8nBin: string;
	/** Folder n8n is installed in (its node_modules is there). */
	installDir: string;
	/** Environment for running this n8n against a user folder (PATH, N8N_USER_FOLDER, quiet defaults). */
	env(userFolder: string): NodeJS.ProcessEnv;
}

/**
 * Variables an outer `npm run` leaves behind that would steer the nested npm wrongly: the repo's
 * ignore-scripts=true (breaks the rebuild), the user npmrc's nodedir=/usr (Node 20 headers), prefixes.
 */
const NPM_LEAKS = /^npm_(package_|lifecycle_|config_(ignore_scripts|nodedir|local_prefix|prefix|global|dry_run|workspaces?|include_workspace_root)$)/i;

export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {};
	for (const [key, value] of Object.entries(process.env)) {
		// NODE_OPTIONS may carry a loader of the calling tool (tsx, ts-node) into Node 24.
		if (!NPM_LEAKS.test(key) && key !== 'NODE_OPTIONS') env[key] = value;
	}
	return { ...env, ...extra };
}

function readMarker(folder: string): Record<string, unknown> | undefined {
	try {
		const text = readFileSync(join(folder, MARKER), 'utf8').trim();
		return text.startsWith('{') ? JSON.parse(text) : { version: text };
	} catch {
		return undefined;
	}
}

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

/**
 * One installer per folder across processes (e2e for both lines may start together). The lock
 * holds the owner's pid, so a lock left by a killed installer is taken over instead of waited on.
 */
async function withLock<T>(name: string, log: Log, work: () => Promise<T>): Promise<T> {
	mkdirSync(CACHE_DIR, { recursive: true });
	const lockPath = join(CACHE_DIR, `${name}.lock`);
	const deadline = Date.now() + 30 * 60_000;
	let announced = false;
	for (;;) {
		try {
			const fd = openSync(lockPath, 'wx');
			writeSync(fd, JSON.stringify({ pid: process.pid, since: new Date().toISOString() }));
			closeSync(fd);
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
		}
		let holder: number | undefined;
		try {
			holder = Number(JSON.parse(readFileSync(lockPath, 'utf8')).pid);
		} catch {
			// Being written this very moment, or an empty lock of an older version of this script.
		}
		const stale = holder !== undefined ? !isAlive(holder) : Date.now() - (statSync(lockPath, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 60_000;
		if (stale) {
			log(`removing a stale lock (pid ${holder ?? 'unknown'}): ${lockPath}`);
			rmSync(lockPath, { force: true });
			continue;
		}
		if (!announced) log(`waiting for another installer (pid ${holder ?? '?'}) holding ${lockPath}`);
		announced = true;
		if (Date.now() > deadline) throw new Error(`waited 30 minutes for ${lockPath}`);
		await new Promise((done) => setTimeout(done, 1000));
	}
	try {
		return await work();
	} finally {
		rmSync(lockPath, { force: true });
	}
}

/** Runs a command, its output going to a log file; heartbeats keep a long npm install visibly alive. */
async function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; log: Log; logFile: string }): Promise<string> {
	const started = Date.now();
	options.log(`$ ${command} ${args.join(' ')}`);
	const file = createWriteStream(options.logFile, { flags: 'a' });
	file.write(`\n$ ${command} ${args.join(' ')}  (cwd ${options.cwd})\n`);
	const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	const collect = (chunk: Buffer) => {
		file.write(chunk);
		output = (output + chunk.toString('utf8')).slice(-200_000);
	};
	child.stdout.on('data', collect);
	child.stderr.on('data', collect);
	const heartbeat = setInterval(() => options.log(`  … ${Math.round((Date.now() - started) / 1000)} s`), 30_000);
	const code = await new Promise<number>((done) => {
		child.once('error', (error) => {
			collect(Buffer.from(String(error)));
			done(-1);
		});
		child.once('close', (exitCode) => done(exitCode ?? -1));
	});
	clearInterval(heartbeat);
	await new Promise((done) => file.end(done));
	if (code !== 0) {
		throw new Error(`${command} ${args.join(' ')} failed (exit ${code}); full log: ${options.logFile}\n${output.slice(-4000)}`);
	}
	options.log(`  done in ${Math.round((Date.now() - started) / 1000)} s`);
	return output;
}

/** npm package that carries a Node binary and its headers for this machine. */
function nodePackageName(): string {
	const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
	const platform = process.platform === 'darwin' ? 'darwin' : 'linux';
	return `node-${platform}-${arch}`;
}

export interface Node24 {
	nodeBin: string;
	/** The package folder: bin/node and include/node, used as npm_config_nodedir. */
	nodeDir: string;
}

export async function ensureNode24(log: Log): Promise<Node24> {
	// The version is in the folder name, so a new pin installs beside the old one.
	const folder = join(CACHE_DIR, `node-${NODE24_VERSION}`);
	const nodeDir = join(folder, 'node_modules', nodePackageName());
	const nodeBin = join(nodeDir, 'bin', 'node');
	const ready = () => readMarker(folder)?.version === NODE24_VERSION && existsSync(nodeBin);
	if (ready()) return { nodeBin, nodeDir };
	await withLock(`node-${NODE24_VERSION}`, log, async () => {
		if (ready()) return;
		const started = Date.now();
		log(`Installing Node ${NODE24_VERSION} (${nodePackageName()}) into ${folder}`);
		rmSync(join(folder, 'node_modules'), { recursive: true, force: true });
		mkdirSync(folder, { recursive: true });
		mkdirSync(LOG_DIR, { recursive: true });
		writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'node24-runtime', private: true, dependencies: { [nodePackageName()]: NODE24_VERSION } }, null, 2));
		const logFile = join(LOG_DIR, `install-node-${NODE24_VERSION}.log`);
		const env = cleanEnv();
		await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: folder, env, log, logFile });
		const printed = (await run(nodeBin, ['--version'], { cwd: folder, env, log, logFile })).trim();
		if (printed !== `v${NODE24_VERSION}`) throw new Error(`${nodeBin} printed ${printed}, expected v${NODE24_VERSION}`);
		writeFileSync(join(folder, MARKER), JSON.stringify({ version: NODE24_VERSION, seconds: Math.round((Date.now() - started) / 1000) }));
	});
	return { nodeBin, nodeDir };
}

/** Quiet, offline-friendly defaults for every n8n process started from here. */
function n8nBaseEnv(nodeBin: string, userFolder: string): NodeJS.ProcessEnv {
	return cleanEnv({
		// n8n's task runner and any child `node` must be Node 24 as well.
		PATH: `${join(nodeBin, '..')}:${process.env.PATH ?? ''}`,
		N8N_USER_FOLDER: userFolder,
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_SECURE_COOKIE: 'false',
		N8N_LOG_LEVEL: 'info',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		// Setting it silences 1.x's warning about the legacy single-connection SQLite driver.
		DB_SQLITE_POOL_SIZE: '2',
	});
}

export interface EnsureOptions {
	log?: Log;
}

/** Installs (once) and returns the pinned n8n of a line, on the pinned Node 24. */
export async function ensureRuntime(line: N8nLine, options: EnsureOptions | Log = {}): Promise<Runtime> {
	const log: Log = typeof options === 'function' ? options : (options.log ?? ((text) => console.log(text)));
	if (!(line in N8N_VERSIONS)) throw new Error(`unknown n8n line ${String(line)}; use '2' or '1'`);
	const { nodeBin, nodeDir } = await ensureNode24(log);
	const version = N8N_VERSIONS[line];
	const installDir = join(CACHE_DIR, `n8n-${version}`);
	const n8nBin = join(installDir, 'node_modules', 'n8n', 'bin', 'n8n');
	const runtime: Runtime = { line, version, nodeBin, n8nBin, installDir, env: (userFolder) => n8nBaseEnv(nodeBin, userFolder) };
	const ready = () => {
		const marker = readMarker(installDir);
		return marker?.version === version && marker?.node === NODE24_VERSION && existsSync(n8nBin);
	};
	if (ready()) return runtime;

	await withLock(`n8n-${version}`, log, async () => {
		if (ready()) return;
		const started = Date.now();
		log(`Installing n8n ${version} for Node ${NODE24_VERSION} into ${installDir} (about 3 GB, a few minutes, once)`);
		// A half-finished tree from an interrupted install is not trusted: start clean.
		rmSync(join(installDir, 'node_modules'), { recursive: true, force: true });
		rmSync(join(installDir, 'package-lock.json'), { force: true });
		mkdirSync(installDir, { recursive: true });
		mkdirSync(LOG_DIR, { recursive: true });
		writeFileSync(
			join(installDir, 'package.json'),
			JSON.stringify({ name: `n8n-${version}-runtime`, private: true, dependencies: { n8n: version }, overrides: OVERRIDES[line] }, null, 2),
		);
		const logFile = join(LOG_DIR, `install-n8n-${version}.log`);
		const env = cleanEnv({ PATH: `${join(nodeDir, 'bin')}:${process.env.PATH ?? ''}`, npm_config_nodedir: nodeDir });
		// Scripts off: some optional natives (the Kafka client) download during their build and fail offline.
		await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: installDir, env, log, logFile });
		await run('npm', ['rebuild', ...NATIVE_MODULES, '--loglevel=error'], { cwd: installDir, env: { ...env, npm_config_ignore_scripts: 'false' }, log, logFile });
		const loadCheck = NATIVE_MODULES.map((name) => `require(${JSON.stringify(name)})`).join(';');
		await run(nodeBin, ['-e', loadCheck], { cwd: installDir, env, log, logFile });
		const printed = (await run(nodeBin, [n8nBin, '--version'], { cwd: installDir, env, log, logFile })).trim();
		if (!printed.split('\n').includes(version)) throw new Error(`n8n --version printed "${printed}", expected ${version}`);
		const seconds = Math.round((Date.now() - started) / 1000);
		writeFileSync(join(installDir, MARKER), JSON.stringify({ version, node: NODE24_VERSION, seconds, installedAt: new Date().toISOString() }));
		log(`n8n ${version} ready in ${seconds} s`);
	});
	return runtime;
}
