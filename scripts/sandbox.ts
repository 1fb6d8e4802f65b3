/**
 * Puts this package, a gateway credential and the example workflows into a real n8n user folder,
 * the way a user gets them: the packed package installed as a community package, the examples
 * imported unchanged. Shared by `npm start`, `npm run test:sandbox` and the end-to-end suite.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { activateWorkflow, installAsCommunityPackage, NODE_TYPE_PREFIX, REPO_ROOT, runN8nCommand, type N8nEnvironment, type Runtime } from './n8n-runtime';

export const EXAMPLES_DIR = join(REPO_ROOT, 'examples');
/** The examples name this credential; the sandbox keeps one credential under this id, pointed at the current gateway. */
export const CREDENTIAL_ID = 'dgw-credential';
/** What the examples' Settings node holds: the emulator's notification receiver on its default port. */
export const DEFAULT_NOTIFICATION_URL = 'http://127.0.0.1:8787/__emulator/notifications';

/** The owner `npm start` creates in a new sandbox. */
export const SANDBOX_OWNER = { email: 'demo@example.com', password: 'Sandbox-Demo-1', firstName: 'Demo', lastName: 'User' };
/** `npm start` prints this once everything is up; test:sandbox waits for it. */
export const READY_LINE = 'is running with the Data Gateway nodes';

export interface ExampleWorkflow {
	id: string;
	name: string;
	nodes: Array<{ name: string; type: string; webhookId?: string; parameters: Record<string, unknown> }>;
	[key: string]: unknown;
}

export function loadExamples(): Record<string, ExampleWorkflow> {
	const examples: Record<string, ExampleWorkflow> = {};
	for (const file of readdirSync(EXAMPLES_DIR).filter((name) => name.endsWith('.json')).sort()) {
		examples[file.replace(/\.json$/, '')] = JSON.parse(readFileSync(join(EXAMPLES_DIR, file), 'utf8'));
	}
	return examples;
}

/**
 * Trigger workflows: their production webhook path is /webhook/<webhookId>/data-gateway-sms, with
 * ?token=… when the trigger's Security sets a URL token (the examples do): the URL the gateway gets.
 */
export function webhookPathOf(workflow: ExampleWorkflow): string | undefined {
	const trigger = workflow.nodes.find((node) => node.type === `${NODE_TYPE_PREFIX}dataGatewaySmsTrigger`);
	if (!trigger?.webhookId) return undefined;
	const token = (trigger.parameters.security as { token?: string } | undefined)?.token;
	return `webhook/${trigger.webhookId}/data-gateway-sms${token ? `?token=${encodeURIComponent(token)}` : ''}`;
}

/** The node that starts a manual run of an example (its manual trigger). */
export function manualTriggerOf(workflow: ExampleWorkflow): string | undefined {
	return workflow.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger')?.name;
}

/** "Data Gateway (emulator)" or "Data Gateway (gateway.example.com)": the credential says where it points. */
export function credentialNameFor(gatewayUrl: string, emulator: boolean): string {
	if (emulator) return 'Data Gateway (emulator)';
	try {
		return `Data Gateway (${new URL(gatewayUrl).host})`;
	} catch {
		return 'Data Gateway';
	}
}

export interface SandboxOptions extends N8nEnvironment {
	/** The packed package (packPackage()); installed afresh each time, so a rebuilt package is what runs. */
	tarball: string;
	gatewayUrl: string;
	appCode: string;
	credentialName: string;
	/** Where the examples' notifications go; replaces DEFAULT_NOTIFICATION_URL when it differs. */
	notificationUrl?: string;
}

export interface PreparedSandbox {
	examples: Record<string, ExampleWorkflow>;
	/** Example ids imported now (the others were already in the user folder and are left as the user keeps them). */
	importedIds: string[];
}

async function n8nOrThrow(runtime: Runtime, args: string[], options: N8nEnvironment) {
	const result = await runN8nCommand(runtime, args, options);
	if (result.code !== 0) throw new Error(`n8n ${args[0]} failed (${result.code}):\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`);
	return result;
}

/**
 * Installs the package and the credential (replaced each time, so it points at the current
 * gateway), imports the examples that are not in the user folder yet (by id, so nothing is
 * duplicated and the user's edits stay), and activates the trigger examples it imported.
 */
export async function prepareSandbox(runtime: Runtime, options: SandboxOptions): Promise<PreparedSandbox> {
	installAsCommunityPackage(runtime, options.userFolder, options.tarball);
	const staging = join(options.userFolder, 'import');
	rmSync(staging, { recursive: true, force: true });
	mkdirSync(join(staging, 'workflows'), { recursive: true });
	const credential = [
		{
			id: CREDENTIAL_ID,
			name: options.credentialName,
			type: 'dataGatewayApi',
			data: { appCodeSecret: options.appCode, baseUrl: options.gatewayUrl, appCodePlacement: 'query' },
		},
	];
	const credentialFile = join(staging, 'credentials.json');
	writeFileSync(credentialFile, JSON.stringify(credential));
	try {
		await n8nOrThrow(runtime, ['import:credentials', `--input=${credentialFile}`], options);
	} finally {
		// The file holds the appCode in plain text; n8n keeps it encrypted.
		rmSync(credentialFile, { force: true });
	}

	const listed = await n8nOrThrow(runtime, ['list:workflow', '--onlyId'], options);
	const existing = new Set(listed.stdout.split('\n').map((line) => line.trim()));
	const examples: Record<string, ExampleWorkflow> = {};
	const importedIds: string[] = [];
	for (const [name, example] of Object.entries(loadExamples())) {
		let text = JSON.stringify(example);
		if (options.notificationUrl) text = text.split(DEFAULT_NOTIFICATION_URL).join(options.notificationUrl);
		examples[name] = JSON.parse(text);
		if (existing.has(example.id)) continue;
		writeFileSync(join(staging, 'workflows', `${name}.json`), text);
		importedIds.push(example.id);
	}
	if (importedIds.length > 0) {
		await n8nOrThrow(runtime, ['import:workflow', '--separate', `--input=${join(staging, 'workflows')}`], options);
		for (const workflow of Object.values(examples)) {
			if (importedIds.includes(workflow.id) && webhookPathOf(workflow)) await activateWorkflow(runtime, workflow.id, options);
		}
	}
	rmSync(staging, { recursive: true, force: true });
	return { examples, importedIds };
}
