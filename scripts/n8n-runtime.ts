/**
 * A pinned, real n8n (2.41.0 or 1.123.81) on a pinned Node 24, both from the npm registry,
 * cached in .n8n-runtime/. Used by `npm start`, `npm run test:e2e` and `npm run bench`.
 *
 *   npx tsx scripts/n8n-runtime.ts install 2|1|all   install (once) and print the paths
 *   npx tsx scripts/n8n-runtime.ts check 2|1|all     start each with no extensions and prove it serves
 *
 * The install recipe and its traps: ../shared/notes/n8n-runtime.md (beside this repository).
 */
import { checkRuntime } from './n8n-runtime/check';
import { CACHE_DIR, ensureRuntime, N8N_VERSIONS, NODE24_VERSION, type N8nLine } from './n8n-runtime/install';

export { CACHE_DIR, cleanEnv, ensureNode24, ensureRuntime, LOG_DIR, N8N_VERSIONS, NODE24_VERSION, REPO_ROOT } from './n8n-runtime/install';
export type { EnsureOptions, Log, N8nLine, Node24, Runtime } from './n8n-runtime/install';
export { activateWorkflow, freePort, isWebhookRegistered, n8nCommand, resetUserManagement, runN8nCommand, startN8n } from './n8n-runtime/run';
export type { CommandResult, N8nEnvironment, RunningN8n, StartOptions } from './n8n-runtime/run';
export { loginOwner, setupOwner } from './n8n-runtime/owner';
export { communityNodesDir, installAsCommunityPackage, NODE_TYPE_PREFIX, PACKAGE_NAME, packPackage } from './n8n-runtime/community';
export type { OwnerAccount } from './n8n-runtime/owner';
export { N8nRest } from './n8n-runtime/rest';
export type { ExecutionSummary, WorkflowSummary } from './n8n-runtime/rest';
export { checkRuntime } from './n8n-runtime/check';

function linesOf(which: string | undefined): N8nLine[] {
	if (which === 'all') return ['2', '1'];
	if (which === '2' || which === '1') return [which];
	throw new Error(`expected 2, 1 or all, got ${which ?? 'nothing'}`);
}

async function cli(command: string | undefined, which: string | undefined) {
	const stamp = () => new Date().toISOString().slice(11, 19);
	const log = (text: string) => console.log(`[${stamp()}] ${text}`);
	if (command === 'install') {
		for (const line of linesOf(which)) {
			const started = Date.now();
			const runtime = await ensureRuntime(line, { log });
			console.log(
				[
					`n8n ${runtime.version} (line ${line}.x) on Node ${NODE24_VERSION}, ready after ${((Date.now() - started) / 1000).toFixed(1)} s`,
					`  node:  ${runtime.nodeBin}`,
					`  n8n:   ${runtime.n8nBin}`,
					`  run:   ${runtime.nodeBin} ${runtime.n8nBin} <command>`,
				].join('\n'),
			);
		}
	} else if (command === 'check') {
		for (const line of linesOf(which)) {
			const report = await checkRuntime(line, { log, keep: process.env.KEEP === '1' });
			console.log(`check passed: ${JSON.stringify(report)}`);
		}
	} else {
		console.error(
			`usage: npx tsx scripts/n8n-runtime.ts install|check 2|1|all\n` +
				`  pins: n8n ${N8N_VERSIONS['2']} (2.x), ${N8N_VERSIONS['1']} (1.x), Node ${NODE24_VERSION}; cache ${CACHE_DIR} (N8N_RUNTIME_CACHE moves it)`,
		);
		process.exit(2);
	}
}

if (require.main === module) {
	const [command, which] = process.argv.slice(2);
	cli(command, which).catch((error: unknown) => {
		console.error(error instanceof Error ? error.message : error);
		process.exit(1);
	});
}
