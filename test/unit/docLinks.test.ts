/**
 * No dead links: every documentation link the nodes and the credential show (descriptions, notices,
 * codex files, and any readmeUrl/readmeLink call in their sources) reaches a page of this repository
 * and a heading on it, and every relative link between README.md, docs/*.md,
 * bench/results/REPORT.md and CHANGELOG.md reaches a file that exists and, for a page, a heading.
 * Headings are read as GitHub names them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import type { INodeType, IVersionedNodeType } from 'n8n-workflow';

import { DataGatewayApi } from '../../credentials/DataGatewayApi.credentials';
import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { README_URL, readmeUrl } from '../../nodes/shared/n8n/readmeLink';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const filesUnder = (folder: string, ending: string) =>
	readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
		.filter((file) => file.endsWith(ending))
		.map((file) => join(folder, file));

/** The lines of a page that are prose: fenced code blocks left out, inline code blanked. */
function proseLines(text: string): string[] {
	let fenced = false;
	return text.split('\n').map((line) => {
		if (/^\s*```/.test(line)) {
			fenced = !fenced;
			return '';
		}
		return fenced ? '' : line.replace(/`[^`]*`/g, (code) => (code.length > 2 ? 'x' : code));
	});
}

/** GitHub's anchor of a heading: its text as shown, lower-cased, punctuation dropped, spaces as hyphens. */
function githubSlug(heading: string): string {
	const shown = heading
		.replace(/!\[[^\]]*\]\([^)]*\)/g, '')
		.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/<[^>]+>/g, '')
		.replace(/[`*]/g, '');
	return shown.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor of a page: its headings (a repeated one gets -1, -2, … as on GitHub) and explicit ids. */
function anchorsOf(path: string): Set<string> {
	const text = read(path);
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	let fenced = false;
	for (const line of text.split('\n')) {
		if (/^\s*```/.test(line)) fenced = !fenced;
		const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (heading) {
			const slug = githubSlug(heading[1]);
			const count = seen.get(slug) ?? 0;
			seen.set(slug, count + 1);
			anchors.add(count === 0 ? slug : `${slug}-${count}`);
		}
	}
	for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
	return anchors;
}

/** Why a link to `path#anchor` in the repository is dead, or undefined when it is not. */
function deadLink(path: string, anchor: string | undefined): string | undefined {
	const target = normalize(path);
	if (target.startsWith('..') || !existsSync(join(ROOT, target))) return `${target} does not exist`;
	if (anchor === undefined || anchor === '') return undefined;
	if (statSync(join(ROOT, target)).isDirectory() || !target.endsWith('.md')) return `${target} is not a page with headings`;
	return anchorsOf(target).has(decodeURIComponent(anchor)) ? undefined : `${target} has no heading #${anchor}`;
}

/** A link to this repository on GitHub, as a path in it and an anchor: the repository page shows README.md. */
function repositoryTarget(url: string): { path: string; anchor?: string } | undefined {
	if (!url.startsWith(README_URL)) return undefined;
	const [location, anchor] = url.slice(README_URL.length).split('#');
	if (location === '' || location === '/') return { path: 'README.md', anchor };
	const blob = /^\/blob\/main\/(.+)$/.exec(location);
	return blob ? { path: blob[1], anchor } : { path: `(not a page of the main branch: ${url})`, anchor };
}

function descriptionsOf(node: INodeType | IVersionedNodeType): unknown[] {
	if ('nodeVersions' in node) return Object.values(node.nodeVersions).map((version) => version.description);
	return [node.description];
}

/** Every link to this repository in what n8n shows of the nodes and the credential. */
function linksShownByNodes(): string[] {
	const nodes = [new DataGatewayVehicle(), new DataGatewayEnterprise(), new DataGatewayTelephone(), new DataGatewaySms(), new DataGatewaySmsTrigger()];
	const credential = new DataGatewayApi();
	const shown = JSON.stringify([...nodes.flatMap(descriptionsOf), credential.documentationUrl, credential.properties]);
	const codex = filesUnder('nodes', '.node.json').map(read).join('\n');
	const pattern = new RegExp(`${README_URL.replace(/[.]/g, '\\.')}[^"'\\s<>\\\\]*`, 'g');
	return [...new Set([...shown.matchAll(pattern), ...codex.matchAll(pattern)].map((match) => match[0]))];
}

/** The anchors written at readmeUrl/readmeLink call sites in the sources, hints made at run time included. */
function anchorsCalledInSources(): string[] {
	const sources = [...filesUnder('nodes', '.ts'), ...filesUnder('credentials', '.ts')].map(read).join('\n');
	return [...new Set([...sources.matchAll(/readme(?:Url|Link)\(\s*'([^']+)'/g)].map((match) => match[1]))];
}

const PAGES = ['README.md', 'CHANGELOG.md', 'bench/results/REPORT.md', ...filesUnder('docs', '.md')];

/** Every link written in a page: markdown links and images, and HTML src/href. */
function linksIn(page: string): string[] {
	const prose = proseLines(read(page)).join('\n');
	return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...prose.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
}

describe('links from the nodes and the credential', () => {
	it('each reaches a heading that exists on its page', () => {
		const links = [...linksShownByNodes(), ...anchorsCalledInSources().map(readmeUrl)];
		// The five Docs links, the credential's, the notices and the codex files at least.
		expect(links.length).toBeGreaterThanOrEqual(8);
		const dead = links.flatMap((url) => {
			const target = repositoryTarget(url);
			const problem = target && deadLink(target.path, target.anchor);
			return problem ? [`${url}: ${problem}`] : [];
		});
		expect(dead).toEqual([]);
	});

	it('readmeUrl sends an anchor to the page that holds it, on the main branch', () => {
		expect(readmeUrl('data-gateway-sms')).toBe(`${README_URL}/blob/main/docs/nodes.md#data-gateway-sms`);
		expect(readmeUrl('credentials')).toBe(`${README_URL}#credentials`);
	});
});

describe('links between the pages', () => {
	it.each(PAGES)('%s: every relative link reaches a file and a heading', (page) => {
		const dead = linksIn(page).flatMap((link) => {
			if (/^(mailto:|https?:\/\/)/.test(link) && !link.startsWith(README_URL)) return [];
			const repository = repositoryTarget(link);
			const [path, anchor] = repository ? [repository.path, repository.anchor] : link.split('#');
			const problem = repository ? deadLink(path, anchor) : deadLink(path === '' ? page : join(dirname(page), path), anchor);
			return problem ? [`${page}: ${link}: ${problem}`] : [];
		});
		expect(dead).toEqual([]);
	});

	it('the pages link to each other: README reaches every docs page', () => {
		const fromReadme = new Set(linksIn('README.md').map((link) => normalize(link.split('#')[0])));
		const unreached = filesUnder('docs', '.md').filter((page) => !fromReadme.has(normalize(relative('.', page))));
		expect(unreached).toEqual([]);
	});
});

describe('README is for users', () => {
	it('at most about 300 lines, with the table of the five nodes in its first 80', () => {
		const lines = read('README.md').split('\n');
		expect(lines.length).toBeLessThanOrEqual(300);
		const table = lines.slice(0, 80).filter((line) => /^\| \[Data Gateway /.test(line));
		expect(table).toHaveLength(5);
	});
});

describe('githubSlug', () => {
	it('names headings as GitHub does', () => {
		expect(githubSlug('At most once, and how long each memory lives')).toBe('at-most-once-and-how-long-each-memory-lives');
		expect(githubSlug('Examples (`examples/`)')).toBe('examples-examples');
		expect(githubSlug('The durable store: which setup keeps state where')).toBe('the-durable-store-which-setup-keeps-state-where');
		expect(githubSlug('n8n 3.0')).toBe('n8n-30');
		expect(githubSlug("n8n's linters want some fields written out")).toBe('n8ns-linters-want-some-fields-written-out');
		expect(githubSlug('6–7. Real n8n 2.41 in queue mode')).toBe('67-real-n8n-241-in-queue-mode');
	});
});
