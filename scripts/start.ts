/**
 * `npm start`: real n8n 2.x with this package installed as a community package, against the
 * gateway emulator (or a real gateway when GATEWAY_BASE_URL and GATEWAY_APP_CODE are set), with
 * the examples imported. The sandbox (workflows, credentials, executions) is kept across starts;
 * `npm start -- --reset` starts from a clean slate; `--built` skips the build (`npm run dev` builds first).
 *
 *   N8N_PORT (5678), EMULATOR_PORT (8787)   ports on 127.0.0.1
 *   SANDBOX_DIR (.n8n-sandbox/)              n8n's user folder for the sandbox
 *   N8N_LISTEN_ADDRESS (127.0.0.1)           0.0.0.0 lets a real gateway's callbacks in
 *   WEBHOOK_URL                              the public URL n8n shows for the trigger
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { startEmulator, type Emulator } from '../test/emulator/server';
import { CACHE_DIR, ensureRuntime, packPackage, REPO_ROOT, setupOwner, startN8n, type RunningN8n } from './n8n-runtime';
import { credentialNameFor, prepareSandbox, READY_LINE, SANDBOX_OWNER, webhookPathOf } from './sandbox';
import { seedDemoCatalogue } from './seedCatalogue';

/** An error whose message is the whole story: printed without a stack. */
class StartError extends Error {}

function portFrom(variable: string, fallback: number): number {
	const text = process.env[variable];
	if (text === undefined || text === '') return fallback;
	const port = Number(text);
	if (!Number.isInteger(port) || port < 1 || port > 65535) throw new StartError(`${variable}=${text} is not a port number (1-65535).`);
	return port;
}

/** Fails before any work when a port is taken, naming the variable that moves it. */
async function ensurePortFree(port: number, host: string, variable: string, what: string) {
	await new Promise<void>((done, fail) => {
		const probe = createServer();
		probe.once('error', (error: NodeJS.ErrnoException) => {
			if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
				fail(new StartError(`Port ${port} (${what}) is ${error.code === 'EADDRINUSE' ? 'already in use' : 'not allowed'}. Pick another with ${variable}, e.g. ${variable}=${port + 10} npm start`));
			} else fail(error);
		});
		probe.listen(port, host, () => probe.close(() => done()));
	});
}

const isLoopback = (address: string) => address === '127.0.0.1' || address === 'localhost' || address === '::1';

async function main() {
	const reset = process.argv.includes('--reset');
	const realGateway = Boolean(process.env.GATEWAY_BASE_URL && process.env.GATEWAY_APP_CODE);
	const listenAddress = process.env.N8N_LISTEN_ADDRESS || '127.0.0.1';
	const n8nPort = portFrom('N8N_PORT', 5678);
	const emulatorPort = portFrom('EMULATOR_PORT', 8787);
	const sandboxDir = resolve(process.env.SANDBOX_DIR || join(REPO_ROOT, '.n8n-sandbox'));
	await ensurePortFree(n8nPort, listenAddress, 'N8N_PORT', 'n8n');
	await ensurePortFree(emulatorPort, '127.0.0.1', 'EMULATOR_PORT', 'the gateway emulator');

	// Filled as they start, so Ctrl-C at any point stops what is running.
	const running: { emulator?: Emulator; n8n?: RunningN8n } = {};
	let stopping = false;
	const stop = async () => {
		if (stopping) return;
		stopping = true;
		console.log('\nStopping n8n and the emulator…');
		await running.n8n?.stop();
		await running.emulator?.close();
		console.log('Stopped. Your workflows, credentials and executions are kept in', sandboxDir);
		process.exit(0);
	};
	// npm start runs this as `node --import tsx`: tsx's own CLI SIGKILLs its child (exit 130) when
	// the child does not acknowledge Ctrl-C within 30 ms, as on a busy machine.
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);

	// `npm run dev` (scripts/dev.ts) has just built it.
	if (!process.argv.includes('--built')) {
		console.log('Building the package…');
		const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
		if (build.status !== 0) throw new StartError(`npm run build failed (exit ${build.status}).`);
	}

	if (reset && existsSync(sandboxDir)) {
		console.log(`Resetting the sandbox: removing ${sandboxDir}`);
		rmSync(sandboxDir, { recursive: true, force: true });
	}
	const fresh = !existsSync(join(sandboxDir, '.n8n', 'database.sqlite'));
	mkdirSync(sandboxDir, { recursive: true });

	// Also the receiver of the examples' notifications when a real gateway answers the calls.
	const emulator = await startEmulator({
		port: emulatorPort,
		reviewDelayMs: Number(process.env.EMULATOR_REVIEW_DELAY_MS ?? 5000),
		deliveryDelayMs: Number(process.env.EMULATOR_DELIVERY_DELAY_MS ?? 3000),
		deliveryFailureShare: process.env.EMULATOR_FAILURE_SHARE === undefined ? undefined : Number(process.env.EMULATOR_FAILURE_SHARE),
	});
	const gatewayUrl = realGateway ? String(process.env.GATEWAY_BASE_URL) : emulator.url;
	const appCode = realGateway ? String(process.env.GATEWAY_APP_CODE) : emulator.demo.appCode;
	const credentialName = credentialNameFor(gatewayUrl, !realGateway);
	const notificationUrl = `${emulator.url}/__emulator/notifications`;
	running.emulator = emulator;

	const runtime = await ensureRuntime('2');
	const environment = { userFolder: sandboxDir, port: n8nPort, env: { N8N_LISTEN_ADDRESS: listenAddress } };
	console.log(fresh ? 'Installing the package and importing the credential and the examples…' : 'Installing the package; keeping your workflows, credentials and executions…');
	const packDir = mkdtempSync(join(tmpdir(), 'dgw-start-'));
	const { examples, importedIds } = await prepareSandbox(runtime, { ...environment, tarball: packPackage(packDir), gatewayUrl, appCode, credentialName, notificationUrl }).finally(() =>
		rmSync(packDir, { recursive: true, force: true }),
	);
	if (stopping) return;
	// The SMS node's Signature and Template lists open with the emulator's approved demo objects.
	const seeded = realGateway
		? undefined
		: await seedDemoCatalogue(sandboxDir, gatewayUrl, appCode, emulator.demo).catch((error: unknown) => `not seeded: ${error instanceof Error ? error.message : String(error)}`);
	console.log('Starting n8n…');
	const n8n = await startN8n(runtime, environment);
	running.n8n = n8n;
	n8n.process.once('exit', async (code) => {
		if (stopping) return;
		console.error(`n8n stopped unexpectedly (exit ${code}). Its log: ${n8n.logFile}`);
		await emulator.close();
		process.exit(1);
	});

	let login = `Log in with ${SANDBOX_OWNER.email} / ${SANDBOX_OWNER.password}`;
	try {
		// Creates the owner in a new sandbox, logs in to a kept one.
		await setupOwner(n8n.url, SANDBOX_OWNER);
	} catch {
		login = `Log in with your own account (the sandbox owner's password was changed); npm start -- --reset starts over`;
	}

	const editorUrl = `http://localhost:${n8nPort}`;
	const publicBase = (process.env.WEBHOOK_URL || `${editorUrl}/`).replace(/\/?$/, '/');
	const triggerPaths = Object.values(examples)
		.map(webhookPathOf)
		.filter((path): path is string => path !== undefined);
	// The emulator feeds both example triggers, at their Production URLs and at their Test URLs, so a send made
	// while the editor listens ("Execute step") reaches it; n8n answers 404 there otherwise. A real gateway takes one URL.
	const callbackPaths = triggerPaths.flatMap((path) => [path, path.replace(/^webhook\//, 'webhook-test/')]);
	if (!realGateway) emulator.configure({ callbackUrl: callbackPaths.map((path) => `http://127.0.0.1:${n8nPort}/${path}`).join(',') });

	const lines = [
		``,
		`n8n ${runtime.version} ${READY_LINE}: ${editorUrl}`,
		`  ${login}`,
		`  Gateway: ${realGateway ? `${gatewayUrl} (credential "${credentialName}")` : `emulator at ${emulator.url} (credential "${credentialName}"; ledger: ${emulator.url}/__emulator/ledger)`}`,
		`  Notifications from the examples: ${notificationUrl} (GET lists them)`,
		...(seeded ? [`  SMS lists: ${seeded}`] : []),
		`  Sandbox: ${sandboxDir}${fresh ? ' (new)' : ` (kept${importedIds.length ? `; examples added: ${importedIds.length}` : ''})`}; npm start -- --reset starts over`,
		`  Runtime cache: ${CACHE_DIR}`,
	];
	if (realGateway) {
		lines.push(`  Trigger URLs for the gateway's SMS callback setting (it takes one):`);
		for (const example of Object.values(examples)) {
			const path = webhookPathOf(example);
			if (path) lines.push(`    "${example.name}": ${publicBase}${path}`);
		}
		if (isLoopback(listenAddress)) {
			lines.push(
				`  n8n listens on ${listenAddress} only, so the gateway's callbacks cannot reach the trigger. To receive them, start with`,
				`  N8N_LISTEN_ADDRESS=0.0.0.0 and WEBHOOK_URL=https://<public host>/ (a reverse proxy or tunnel to port ${n8nPort}).`,
			);
		}
	}
	if (!isLoopback(listenAddress)) lines.push(`  n8n listens on ${listenAddress}: change the owner's password (Settings > Personal) before others can reach it.`);
	lines.push(
		``,
		`Try:`,
		`  - "Data Gateway: scheduled phone identification" -> Execute workflow: 8 numbers, 5 distinct, 5 lookups.`,
		`  - "Data Gateway: company registration and copyrights" -> Execute workflow.`,
		`  - "Data Gateway: send a verification code" -> Execute workflow; a few seconds later the active`,
		`    "delivery reports" workflow runs from the gateway's callback and posts to the notifications above.`,
		`  - Add a Data Gateway SMS node: Signature > Create; the review result starts "notify when a review ends".`,
		`Stop with Ctrl-C.`,
	);
	console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
	if (error instanceof StartError) console.error(error.message);
	else console.error(process.env.DEBUG ? error : `npm start failed: ${error instanceof Error ? error.message : String(error)}`);
	process.exit(1);
});
