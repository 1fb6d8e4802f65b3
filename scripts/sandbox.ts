/**
 * Puts this package, a gateway credential and the example workflows into a real n8n user folder.
 * Shared by `npm start` and the end-to-end suite, so both show the same thing.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { activateWorkflow, n8nCommand, REPO_ROOT, type N8nEnvironment, type Runtime } from './n8n-runtime';

export const PACKAGE_NAME = 'n8n-nodes-data-gateway';
/** Nodes loaded through N8N_CUSTOM_EXTENSIONS get this prefix instead of the package name. */
export const CUSTOM_PREFIX = 'CUSTOM.';
export const EXAMPLES_DIR = join(REPO_ROOT, 'examples');
export const CREDENTIAL_ID = 'dgw-credential';
const NOTIFY_PLACEHOLDER = 'https://example.com/replace-with-your-notification-url';

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

/** Trigger workflows: their production webhook path is /webhook/<webhookId>/data-gateway-sms. */
export function webhookPathOf(workflow: ExampleWorkflow): string | undefined {
	const trigger = workflow.nodes.find((node) => node.type.endsWith('.dataGatewaySmsTrigger'));
	return trigger?.webhookId ? `webhook/${trigger.webhookId}/data-gateway-sms` : undefined;
}

export interface SandboxOptions extends N8nEnvironment {
	gatewayUrl: string;
	appCode: string;
	/** Where the example notifications go; the placeholder stays when not given. */
	notifyUrl?: string;
}

/** Imports the credential and the examples, and activates the trigger workflows. Returns the examples as imported. */
export async function prepareSandbox(runtime: Runtime, options: SandboxOptions): Promise<Record<string, ExampleWorkflow>> {
	const staging = join(options.userFolder, 'import');
	mkdirSync(join(staging, 'workflows'), { recursive: true });
	const credential = [
		{
			id: CREDENTIAL_ID,
			name: 'Data Gateway (emulator)',
			type: 'dataGatewayApi',
			data: { appCodeSecret: options.appCode, baseUrl: options.gatewayUrl, appCodePlacement: 'query' },
		},
	];
	writeFileSync(join(staging, 'credentials.json'), JSON.stringify(credential));
	const imported: Record<string, ExampleWorkflow> = {};
	for (const [name, example] of Object.entries(loadExamples())) {
		let text = JSON.stringify(example).split(`"${PACKAGE_NAME}.`).join(`"${CUSTOM_PREFIX}`);
		if (options.notifyUrl) text = text.split(NOTIFY_PLACEHOLDER).join(options.notifyUrl);
		imported[name] = JSON.parse(text);
		writeFileSync(join(staging, 'workflows', `${name}.json`), text);
	}
	for (const args of [
		['import:credentials', `--input=${join(staging, 'credentials.json')}`],
		['import:workflow', '--separate', `--input=${join(staging, 'workflows')}`],
	]) {
		const result = await n8nCommand(runtime, args, options);
		if (result.code !== 0) throw new Error(`n8n ${args[0]} failed:\n${result.stdout}\n${result.stderr}`);
	}
	for (const workflow of Object.values(imported)) {
		if (webhookPathOf(workflow)) await activateWorkflow(runtime, workflow.id, options);
	}
	return imported;
}
