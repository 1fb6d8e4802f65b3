/**
 * Proof that an installed line works end to end without this package: a fresh user folder, an
 * empty custom-extension folder, a built-in Webhook workflow activated headlessly, the server up,
 * health, settings and node types answered, the owner created, and the webhook started once.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { CACHE_DIR, ensureRuntime, LOG_DIR, type Log, type N8nLine } from './install';
import { loginOwner, setupOwner } from './owner';
import { activateWorkflow, runN8nCommand, startN8n } from './run';

const CHECK_OWNER = { email: 'runtime-check@example.com', password: 'Runtime-Check-1', firstName: 'Runtime', lastName: 'Check' };
const WEBHOOK_PATH = 'runtime-check';

/** Built-in nodes only, so the check says nothing about this package. */
function webhookWorkflow() {
	return {
		id: 'runtimeCheck0001',
		name: 'Runtime check',
		active: false,
		nodes: [
			{
				id: 'b6f0c7e2-0000-4000-8000-000000000001',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: 'b6f0c7e2-0000-4000-8000-000000000002',
				parameters: { httpMethod: 'POST', path: WEBHOOK_PATH, options: {} },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

export interface CheckReport {
	line: N8nLine;
	version: string;
	ensureSeconds: number;
	startSeconds: number;
	nodeTypes: number;
	logFile: string;
}

export async function checkRuntime(line: N8nLine, options: { log?: Log; keep?: boolean } = {}): Promise<CheckReport> {
	const log = options.log ?? ((text: string) => console.log(text));
	let started = Date.now();
	const runtime = await ensureRuntime(line, { log });
	const ensureSeconds = (Date.now() - started) / 1000;

	mkdirSync(CACHE_DIR, { recursive: true });
	const workFolder = mkdtempSync(join(CACHE_DIR, `check-${line}-`));
	const userFolder = join(workFolder, 'user');
	const emptyExtensions = join(workFolder, 'extensions');
	mkdirSync(emptyExtensions, { recursive: true });
	const environment = { userFolder, customExtensions: [emptyExtensions] };
	try {
		const workflowFile = join(workFolder, 'workflow.json');
		writeFileSync(workflowFile, JSON.stringify(webhookWorkflow()));
		const imported = await runN8nCommand(runtime, ['import:workflow', `--input=${workflowFile}`], environment);
		assert.equal(imported.code, 0, `import:workflow failed:\n${imported.stdout}\n${imported.stderr}`);
		await activateWorkflow(runtime, webhookWorkflow().id, environment);
		log(`n8n ${runtime.version}: workflow imported and activated`);

		started = Date.now();
		const n8n = await startN8n(runtime, { ...environment, webhookPaths: [`webhook/${WEBHOOK_PATH}`], logFile: join(LOG_DIR, `check-${line}.log`) });
		const startSeconds = (Date.now() - started) / 1000;
		log(`n8n ${runtime.version}: ready at ${n8n.url} in ${startSeconds.toFixed(1)} s (webhook registered)`);
		try {
			const health = await fetch(`${n8n.url}/healthz`);
			assert.equal(health.status, 200, '/healthz');
			assert.deepEqual(await health.json(), { status: 'ok' });

			// Without a session n8n answers with its public settings only (no version in them).
			type Settings = { data: { versionCli?: string; userManagement: { showSetupOnFirstLoad: boolean } } };
			const settingsBefore = (await (await fetch(`${n8n.url}/rest/settings`)).json()) as Settings;
			assert.equal(settingsBefore.data.userManagement.showSetupOnFirstLoad, true, 'fresh instance asks for an owner');

			const cookie = await setupOwner(n8n.url, CHECK_OWNER);
			const me = (await (await fetch(`${n8n.url}/rest/login`, { headers: { cookie } })).json()) as { data: { email: string; role?: string } };
			assert.equal(me.data.email, CHECK_OWNER.email, 'the session belongs to the new owner');
			const settingsAfter = (await (await fetch(`${n8n.url}/rest/settings`, { headers: { cookie } })).json()) as Settings;
			assert.equal(settingsAfter.data.versionCli, runtime.version, 'full settings report the pinned version');
			assert.equal(settingsAfter.data.userManagement.showSetupOnFirstLoad, false, 'owner setup is done');
			// A second call finds the owner and logs in; a plain login works too.
			await setupOwner(n8n.url, CHECK_OWNER);
			await loginOwner(n8n.url, CHECK_OWNER);
			log(`n8n ${runtime.version}: owner ${CHECK_OWNER.email} set up, session works`);

			const types = (await (await fetch(`${n8n.url}/types/nodes.json`, { headers: { cookie } })).json()) as Array<{ name: string }>;
			assert.ok(types.some((type) => type.name === 'n8n-nodes-base.webhook'), 'node types listed');

			const hook = await fetch(`${n8n.url}/webhook/${WEBHOOK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ping":1}' });
			assert.equal(hook.status, 200, `webhook answered ${hook.status}: ${await hook.clone().text()}`);
			log(`n8n ${runtime.version}: webhook answered ${JSON.stringify(await hook.json())}`);
			return { line, version: runtime.version, ensureSeconds, startSeconds, nodeTypes: types.length, logFile: n8n.logFile };
		} finally {
			const stopping = Date.now();
			await n8n.stop();
			log(`n8n ${runtime.version}: stopped in ${((Date.now() - stopping) / 1000).toFixed(1)} s`);
		}
	} finally {
		if (!options.keep) rmSync(workFolder, { recursive: true, force: true });
	}
}
