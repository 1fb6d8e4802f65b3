/**
 * One queue-mode n8n with this package, for the queue-mode suite and the benchmark: Redis,
 * PostgreSQL 17, main, workers and a webhook process, with the given credentials and workflows
 * imported (and published) before the processes start.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { activateWorkflow, ensureRuntime, packPackage, runN8nCommand, setupOwner, type Log } from '../../scripts/n8n-runtime';
import { queueModeEnv, startPostgres, startQueueCluster, startRedis, type QueueCluster, type RunningPostgres, type RunningRedis } from '../../scripts/n8n-runtime/queue';

export interface QueueSetup {
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

export async function startQueueHarness(setup: QueueSetup, log: Log): Promise<QueueHarness> {
	const runtime = await ensureRuntime('2', log);
	const tarball = packPackage();
	const baseDir = mkdtempSync(join(tmpdir(), 'dgw-queue-'));
	const [redis, postgres] = await Promise.all([startRedis(log), startPostgres(log)]);
	log(`redis on ${redis.port}, postgres 17 on ${postgres.port}`);
	// Nothing runs when the suite stops the processes: no need for n8n's 30 s of grace.
	const env = { ...queueModeEnv(redis, postgres, randomBytes(24).toString('hex')), N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5', ...setup.env };
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
				writeFileSync(join(staging, 'credentials.json'), JSON.stringify(setup.credentials(redis)));
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
				await Promise.all([redis.stop(), postgres.stop()]);
				if (keepLogs) log(`n8n logs kept in ${baseDir}`);
				else rmSync(baseDir, { recursive: true, force: true });
			},
		};
	} catch (error) {
		await cluster?.stop();
		await Promise.all([redis.stop(), postgres.stop()]);
		log(`logs kept in ${baseDir}`);
		throw error;
	}
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
