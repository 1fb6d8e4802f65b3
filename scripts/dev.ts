/**
 * `npm run dev`: the development loop of n8n's node starter for this package. It runs `npm start`
 * (the sandbox n8n with the package and the emulator), watches the package's sources, and on a
 * change rebuilds; when the build passes it stops the sandbox and starts it again with the new
 * build, keeping its workflows, credentials and executions. A build that fails keeps the running
 * sandbox and prints why. Ctrl-C stops everything. Arguments go to `npm start` (`-- --reset`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { watch } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
/** What ships: a change elsewhere (tests, docs) needs no restart. */
const WATCHED = ['nodes', 'credentials'];
/** Changes that come together (an editor's save, a git checkout) make one rebuild. */
const QUIET_MS = 400;

let sandbox: ChildProcess | undefined;
let stopping = false;
let pending: NodeJS.Timeout | undefined;
let rebuilding = false;
let again = false;

function startSandbox(args: string[]): void {
	// Its own process group, so that stopping it stops n8n and the emulator it started.
	sandbox = spawn('npm', ['start', '--', '--built', ...args], { cwd: ROOT, stdio: 'inherit', detached: true });
	const started = sandbox;
	started.once('exit', (code) => {
		if (sandbox === started && !stopping) console.error(`[dev] the sandbox stopped (exit ${code}); it starts again on the next change`);
		if (sandbox === started) sandbox = undefined;
	});
}

/** Stops the sandbox as Ctrl-C does (start.ts stops n8n and the emulator quietly) and waits for it. */
async function stopSandbox(): Promise<void> {
	const running = sandbox;
	// Forgotten first: its exit is then not reported as unexpected.
	sandbox = undefined;
	if (!running || running.exitCode !== null || running.pid === undefined) return;
	const ended = new Promise<void>((done) => running.once('exit', () => done()));
	process.kill(-running.pid, 'SIGINT');
	await ended;
}

function build(): boolean {
	return spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' }).status === 0;
}

async function rebuild(args: string[]): Promise<void> {
	if (rebuilding) {
		again = true;
		return;
	}
	rebuilding = true;
	do {
		again = false;
		console.log('[dev] a source changed: rebuilding…');
		if (!build()) {
			console.error('[dev] the build failed: the sandbox keeps the last good build. Fix the error and save again.');
			continue;
		}
		console.log('[dev] built: restarting the sandbox n8n with the new build…');
		await stopSandbox();
		if (!stopping) startSandbox(args);
	} while (again && !stopping);
	rebuilding = false;
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const stop = async () => {
		if (stopping) return;
		stopping = true;
		clearTimeout(pending);
		await stopSandbox();
		process.exit(0);
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
	if (!build()) console.error('[dev] the build failed; the sandbox starts once it passes. Fix the error and save again.');
	else startSandbox(args);
	for (const folder of WATCHED) {
		watch(join(ROOT, folder), { recursive: true }, () => {
			clearTimeout(pending);
			pending = setTimeout(() => void rebuild(args), QUIET_MS);
		});
	}
	console.log(`[dev] watching ${WATCHED.join('/, ')}/ for changes`);
}

main().catch((error: unknown) => {
	console.error(`npm run dev failed: ${error instanceof Error ? error.message : String(error)}`);
	process.exit(1);
});
