/**
 * What the shipped files load. n8n loads every credential type when it starts and whenever the
 * credential list is shown: the credential file must not pull in the node's clients (undici for
 * HTTP, ioredis for the shared Redis). And the tests' entry point stays out of what the nodes load.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const repo = join(__dirname, '..', '..');

/** Loads a file in a fresh Node process and names the packages it loaded. */
function packagesLoadedBy(file: string): string[] {
	const script = `require(${JSON.stringify(file)});
const loaded = Object.keys(require.cache).map((path) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(path)?.[1]).filter(Boolean);
console.log(JSON.stringify([...new Set(loaded)].sort()));`;
	const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: repo, encoding: 'utf8' });
	return JSON.parse(output.trim().split('\n').pop() ?? '[]') as string[];
}

describe('loading the credential type', () => {
	it('loads neither ioredis nor undici nor zod', () => {
		const loaded = packagesLoadedBy(join(repo, 'credentials', 'DataGatewayApi.credentials.ts'));
		expect(loaded).not.toContain('ioredis');
		expect(loaded).not.toContain('undici');
		expect(loaded).not.toContain('zod');
	});

	it('the check itself sees ioredis where a node loads it', () => {
		expect(packagesLoadedBy(join(repo, 'nodes', 'DataGatewaySms', 'DataGatewaySms.node.ts'))).toContain('ioredis');
	});
});

describe('the test entry point (nodes/shared/testing.ts)', () => {
	it('is imported by no node or credential file', () => {
		const shipped = ['nodes', 'credentials'].flatMap((folder) =>
			readdirSync(join(repo, folder), { recursive: true, encoding: 'utf8' })
				.filter((file) => file.endsWith('.ts'))
				.map((file) => join(repo, folder, file)),
		);
		const importers = shipped.filter((file) => /from '[^']*\/testing'/.test(readFileSync(file, 'utf8'))).map((file) => relative(repo, file));
		expect(shipped.length).toBeGreaterThan(50);
		expect(importers).toEqual([]);
	});
});
