/**
 * `npm start`: real n8n 2.x with this package loaded, against the gateway emulator (or a real
 * gateway when GATEWAY_BASE_URL and GATEWAY_APP_CODE are set), with the examples imported.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { startEmulator, type Emulator } from '../test/emulator/server';
import { CACHE_DIR, ensureRuntime, REPO_ROOT, setupOwner, startN8n } from './n8n-runtime';
import { prepareSandbox, webhookPathOf } from './sandbox';

const OWNER = { email: 'demo@example.com', password: 'Sandbox-Demo-1', firstName: 'Demo', lastName: 'User' };

async function main() {
	console.log('Building the package…');
	const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
	if (build.status !== 0) process.exit(build.status ?? 1);

	const realGateway = process.env.GATEWAY_BASE_URL && process.env.GATEWAY_APP_CODE;
	let emulator: Emulator | undefined;
	if (!realGateway) {
		emulator = await startEmulator({ port: Number(process.env.EMULATOR_PORT ?? 8787), reviewDelayMs: 5000, deliveryDelayMs: 3000 });
	}
	const gatewayUrl = realGateway ? String(process.env.GATEWAY_BASE_URL) : (emulator as Emulator).url;
	const appCode = realGateway ? String(process.env.GATEWAY_APP_CODE) : (emulator as Emulator).demo.appCode;

	const runtime = await ensureRuntime('2');
	const userFolder = join(CACHE_DIR, 'sandbox-user');
	rmSync(userFolder, { recursive: true, force: true });
	mkdirSync(userFolder, { recursive: true });
	const port = Number(process.env.N8N_PORT ?? 5678);
	const environment = { userFolder, customExtensions: [join(REPO_ROOT, 'dist')], port };

	console.log('Importing the credential and the example workflows…');
	const examples = await prepareSandbox(runtime, { ...environment, gatewayUrl, appCode });
	console.log('Starting n8n…');
	const n8n = await startN8n(runtime, environment);
	await setupOwner(n8n.url, OWNER);

	const webhookUrls = Object.values(examples)
		.map(webhookPathOf)
		.filter((path): path is string => path !== undefined)
		.map((path) => `http://127.0.0.1:${port}/${path}`);
	// The real gateway takes one callback URL; the emulator feeds both example triggers.
	emulator?.configure({ callbackUrl: webhookUrls.join(',') });

	console.log(`
n8n ${runtime.version} is running with the Data Gateway nodes: http://localhost:${port}
  Log in with ${OWNER.email} / ${OWNER.password}
  Gateway: ${realGateway ? gatewayUrl : `emulator at ${gatewayUrl} (ledger: ${gatewayUrl}/__emulator/ledger)`}
  Credential "Data Gateway (emulator)" is ready${realGateway ? ' (pointing at your gateway)' : ''}.

Try:
  - "Data Gateway: scheduled phone identification" -> Execute workflow: 8 numbers, 5 distinct, 5 lookups.
  - "Data Gateway: company registration and copyrights" -> Execute workflow.
  - "Data Gateway: send a verification code" -> Execute workflow; a few seconds later the active
    "delivery reports" workflow runs from the gateway's callback (see Executions).
  - Add a Data Gateway SMS node: Signature > Create, then Get after ~5 s to see the review result.
Stop with Ctrl-C.`);

	const stop = async () => {
		await n8n.stop();
		await emulator?.close();
		process.exit(0);
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
	n8n.process.once('exit', async (code) => {
		console.error(`n8n exited (${code}). Its last output:\n${n8n.log().slice(-3000)}`);
		await emulator?.close();
		process.exit(1);
	});
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
