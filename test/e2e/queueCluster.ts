/**
 * One queue-mode n8n with this package, for the queue-mode suite and the benchmark: Redis,
 * PostgreSQL 17, main, workers and a webhook process, with the given credentials and workflows
 * imported (and published) before the processes start. The queue Redis is set up as operators
 * of a shared or managed Redis run it: a password, given to n8n in a file (QUEUE_BULL_REDIS_PASSWORD_FILE,
 * as a Docker secret), and TLS only, with a certificate made here by openssl that every process
 * trusts through NODE_EXTRA_CA_CERTS; maxmemory-policy noeviction, Redis's default.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { activateWorkflow, ensureRuntime, packPackage, runN8nCommand, setupOwner, type Log } from '../../scripts/n8n-runtime';
import { ensureDebianCommand, queueModeEnv, startPostgres, startQueueCluster, startRedis, type QueueCluster, type RunningPostgres, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { makeSelfSignedCertificate } from '../harness/tlsCertificate';

export interface QueueSetup {
	/** `redis.url` there carries the queue Redis's password, as the credential's Shared Redis URL takes it. */
	credentials: (redis: RunningRedis) => unknown[];
	workflows: Array<{ id: string; [key: string]: unknown }>;
	/** Workflow ids to publish (their webhooks then answer in main and the webhook process). */
	publish: string[];
	workers?: number;
	workerConcurrency?: number;
	env?: NodeJS.ProcessEnv;
}

export interface QueueHarness {
	cluster: QueueCluster;
	redis: RunningRedis;
	postgres: RunningPostgres;
	cookie: string;
	executions(workflowId: string): Promise<Array<{ id: string; status: string; mode: string }>>;
	/** Where each process's log is (`<name>.log`), kept when stopped with keepLogs. */
	baseDir: string;
	stop(options?: { keepLogs?: boolean }): Promise<void>;
}

async function runOrThrow(...args: Parameters<typeof runN8nCommand>) {
	const result = await runN8nCommand(...args);
	if (result.code !== 0) throw new Error(`n8n ${args[1].join(' ')} failed (${result.code}):\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`);
}

/** The queue Redis's secrets in a folder of their own (mode 700): a certificate for 127.0.0.1 and localhost, a password file (mode 600). */
function makeSecrets(log: Log) {
	ensureDebianCommand('openssl', 'openssl', log);
	const certificate = makeSelfSignedCertificate();
	const password = randomBytes(18).toString('base64url');
	const passwordFile = join(certificate.dir, 'redis-password');
	writeFileSync(passwordFile, password, { mode: 0o600 });
	// NODE_EXTRA_CA_CERTS names one file: the CAs this machine already adds (a proxy's, say) stay trusted.
	const inherited = process.env.NODE_EXTRA_CA_CERTS;
	const caBundle = join(certificate.dir, 'ca-bundle.pem');
	writeFileSync(caBundle, [inherited && existsSync(inherited) ? readFileSync(inherited, 'utf8') : '', certificate.pem].join('\n'));
	return { ...certificate, password, passwordFile, caBundle };
}

export async function startQueueHarness(setup: QueueSetup, log: Log): Promise<QueueHarness> {
	const runtime = await ensureRuntime('2', log);
	const tarball = packPackage();
	const baseDir = mkdtempSync(join(tmpdir(), 'dgw-queue-'));
	const secrets = makeSecrets(log);
	const [redis, postgres] = await Promise.all([
		startRedis(log, { password: secrets.password, tls: secrets, extraArgs: ['--maxmemory-policy', 'noeviction'] }),
		startPostgres(log),
	]);
	log(`redis on ${redis.port} (TLS only, password), postgres 17 on ${postgres.port}`);
	const stopServers = async () => {
		await Promise.all([redis.stop(), postgres.stop()]);
		rmSync(secrets.dir, { recursive: true, force: true });
	};
	// Nothing runs when the suite stops the processes: no need for n8n's 30 s of grace.
	const env = { ...queueModeEnv(redis, postgres, randomBytes(24).toString('hex'), secrets), N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5', ...setup.env };
	// A password in the URL is one the credential's Shared Redis URL takes (its Password field would override it).
	const forCredentials: RunningRedis = { ...redis, url: redis.url.replace('://', `://:${secrets.password}@`) };
	let cluster: QueueCluster | undefined;
	try {
		cluster = await startQueueCluster(runtime, {
			tarball,
			env,
			baseDir,
			log,
			workers: setup.workers ?? 2,
			workerConcurrency: setup.workerConcurrency ?? 1,
			prepare: async (userFolder) => {
				const staging = join(baseDir, 'import');
				mkdirSync(join(staging, 'workflows'), { recursive: true });
				writeFileSync(join(staging, 'credentials.json'), JSON.stringify(setup.credentials(forCredentials)));
				for (const workflow of setup.workflows) writeFileSync(join(staging, 'workflows', `${workflow.id}.json`), JSON.stringify(workflow));
				// The first command also runs n8n's migrations on the fresh database.
				await runOrThrow(runtime, ['import:credentials', `--input=${join(staging, 'credentials.json')}`], { userFolder, env });
				await runOrThrow(runtime, ['import:workflow', '--separate', `--input=${join(staging, 'workflows')}`], { userFolder, env });
				for (const id of setup.publish) await activateWorkflow(runtime, id, { userFolder, env });
				log('credentials and workflows imported');
			},
		});
		const { main } = cluster;
		const cookie = await setupOwner(main.url, { email: 'queue@example.com', password: 'Queue-Password-1', firstName: 'Queue', lastName: 'Check' });
		const executions = async (workflowId: string) => {
			const filter = encodeURIComponent(JSON.stringify({ workflowId }));
			const response = await fetch(`${main.url}/rest/executions?filter=${filter}&limit=100`, { headers: { cookie } });
			if (!response.ok) throw new Error(`GET /rest/executions answered ${response.status}: ${await response.text()}`);
			const body = (await response.json()) as { data: { results: Array<{ id: string; status: string; mode: string }> } };
			return body.data.results;
		};
		const running = cluster;
		return {
			cluster,
			redis,
			postgres,
			cookie,
			executions,
			baseDir,
			stop: async ({ keepLogs = false } = {}) => {
				await running.stop();
				await stopServers();
				if (keepLogs) log(`n8n logs kept in ${baseDir}`);
				else rmSync(baseDir, { recursive: true, force: true });
			},
		};
	} catch (error) {
		await cluster?.stop();
		await stopServers();
		log(`logs kept in ${baseDir}`);
		throw error;
	}
}

/** redis-cli on `database` of the harness's queue Redis, over TLS with its password (in the environment, not the arguments). */
function redisCli(redis: RunningRedis, database: number, args: string[]): string {
	const tls = redis.caFile ? ['--tls', '--cacert', redis.caFile] : [];
	const result = spawnSync('redis-cli', ['-h', redis.host, '-p', String(redis.port), ...tls, '-n', String(database), ...args], {
		encoding: 'utf8',
		env: { ...process.env, REDISCLI_AUTH: redis.password ?? '' },
	});
	// redis-cli exits 0 on most refusals: they are in its output.
	if (result.status !== 0 || /^(ERR|NOAUTH|WRONGPASS|NOPERM)\b/m.test(result.stdout)) throw new Error(`redis-cli ${args[0]} failed: ${result.stdout.slice(0, 500)}${result.stderr}`);
	return result.stdout;
}

/** The values of the store's keys (`dgw:<hash>`, store/keyName.ts) in that database of the queue Redis. */
export function storeValues(redis: RunningRedis, database = 0): string[] {
	const keys = redisCli(redis, database, ['--scan', '--pattern', 'dgw:*']).split('\n').filter(Boolean);
	const values: string[] = [];
	for (let start = 0; start < keys.length; start += 200) {
		values.push(...redisCli(redis, database, ['--raw', 'MGET', ...keys.slice(start, start + 200)]).split('\n').slice(0, -1));
	}
	return values;
}

/**
 * The SMS node's records in that database of the queue Redis (store/sendRecords/recordValues.ts):
 * sends the gateway took (state `sent`) and messages (one per number and text, with its holders).
 */
export function sendRecordsIn(redis: RunningRedis, database = 0): { sent: number; messages: number } {
	const records = storeValues(redis, database).flatMap((value) => {
		try {
			return [JSON.parse(value) as { state?: unknown; token?: unknown; holders?: unknown }];
		} catch {
			return [];
		}
	});
	return {
		sent: records.filter((record) => record.state === 'sent' && typeof record.token === 'string').length,
		messages: records.filter((record) => typeof record.holders === 'object' && record.holders !== null).length,
	};
}

/** Waits on a condition that real work makes true, polling; fails with `what` after the timeout. */
export async function until<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 60_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((done) => setTimeout(done, 250));
	}
}

/** Execution ids a worker started, from its log (`Worker started execution <id>`). */
export function startedOn(log: string): string[] {
	return [...log.matchAll(/Worker started execution (\S+)/g)].map((match) => match[1]);
}
