/**
 * Installs this package into an n8n user folder the way n8n's Community Nodes does (checked with
 * n8n 2.41.0, ../shared/notes/n8n-runtime.md): the packed tarball extracted to
 * `<user folder>/.n8n/nodes/node_modules/<name>`, devDependencies, peerDependencies and
 * optionalDependencies stripped from its package.json, then a shallow `npm install` without
 * scripts in that folder. n8n then names the node types `<package name>.<node name>` and wires
 * node-based credential tests, as it does for a user's install.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { cleanEnv, REPO_ROOT, type Runtime } from './install';

export const PACKAGE_NAME: string = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).name;
/** Node types of a Community-Nodes install carry the package name. */
export const NODE_TYPE_PREFIX = `${PACKAGE_NAME}.`;

function runOrThrow(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
	const result = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
	if (result.status !== 0) {
		throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status}) in ${cwd}:\n${result.stdout}\n${result.stderr}`);
	}
	return result.stdout;
}

/** `npm pack` of the built package (run `npm run build` first); returns the tarball's path. */
export function packPackage(destination = mkdtempSync(join(tmpdir(), 'dgw-pack-'))): string {
	mkdirSync(destination, { recursive: true });
	const output = runOrThrow('npm', ['pack', '--json', '--pack-destination', destination], REPO_ROOT, cleanEnv());
	const [{ filename }] = JSON.parse(output) as Array<{ filename: string }>;
	return join(destination, filename);
}

/** The folder n8n loads community packages from, for a given N8N_USER_FOLDER. */
export function communityNodesDir(userFolder: string): string {
	return join(userFolder, '.n8n', 'nodes');
}

/**
 * Extracts `tarball` into the user folder's community-nodes folder (replacing an earlier copy) and
 * installs its runtime dependencies with n8n's own npm flags, under the runtime's Node 24.
 */
export function installAsCommunityPackage(runtime: Runtime, userFolder: string, tarball: string): string {
	const nodesDir = communityNodesDir(userFolder);
	const packageDir = join(nodesDir, 'node_modules', PACKAGE_NAME);
	rmSync(packageDir, { recursive: true, force: true });
	mkdirSync(packageDir, { recursive: true });
	runOrThrow('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1'], nodesDir, cleanEnv());

	const manifestPath = join(packageDir, 'package.json');
	const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
	delete manifest.devDependencies;
	delete manifest.peerDependencies;
	delete manifest.optionalDependencies;
	writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));

	// n8n keeps a package.json in the nodes folder listing what it installed.
	const listPath = join(nodesDir, 'package.json');
	let list: { name: string; private: boolean; dependencies: Record<string, string> } = { name: 'installed-nodes', private: true, dependencies: {} };
	try {
		list = { ...list, ...JSON.parse(readFileSync(listPath, 'utf8')) };
	} catch {
		// First install into this user folder.
	}
	list.dependencies = { ...list.dependencies, [PACKAGE_NAME]: manifest.version };
	writeFileSync(listPath, JSON.stringify(list, null, 2));

	const env = cleanEnv({ PATH: `${join(runtime.nodeBin, '..')}:${process.env.PATH ?? ''}` });
	runOrThrow(
		'npm',
		['install', '--audit=false', '--fund=false', '--bin-links=false', '--install-strategy=shallow', '--ignore-scripts=true', '--package-lock=false', '--loglevel=error'],
		packageDir,
		env,
	);
	return packageDir;
}
