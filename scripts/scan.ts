/**
 * `npm run scan` (part of `npm run check`; run `npm run build` first): what n8n checks before it
 * lists a community package, offline.
 * 1. `npm pack --dry-run --json` ships only what n8n loads: dist/ (every node and credential named in
 *    package.json, no sources, tests, declarations or maps), README.md, LICENSE and package.json.
 * 2. n8n's community-package scanner (`analyzePackage` of @n8n/scan-community-package) on the source
 *    files it lints and on the packed tarball, as its registry scan does. Findings other than
 *    scripts/n8n-accepted-findings.mjs fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

import { packPackage, REPO_ROOT } from './n8n-runtime';

/** The scanner's own eslint and fast-glob, so the findings come from the same code as its verdict. */
const fromScanner = createRequire(require.resolve('@n8n/scan-community-package/package.json'));
const { ESLint } = fromScanner('eslint') as typeof import('eslint');
const fastGlob = fromScanner('fast-glob') as { sync(patterns: string[], options: Record<string, unknown>): string[] };

interface Scanner {
	analyzePackage(folder: string, patterns: string[]): Promise<ScanResult>;
	buildScanConfig(): Promise<unknown>;
	SOURCE_FILE_PATTERNS: string[];
}
const loadScanner = async () => (await import(pathToFileURL(fromScanner.resolve('./scanner/scanner.mjs')).href)) as Scanner;

interface AcceptedFinding {
	rule: string;
	files: string[];
	reason: string;
}
interface ScanResult {
	passed: boolean;
	message?: string;
	details?: string;
}
interface Finding {
	file: string;
	line: number;
	rule: string;
	message: string;
	severity: number;
}

const TOP_LEVEL_FILES = new Set(['README.md', 'LICENSE', 'package.json']);
/** What n8n needs at run time besides the compiled nodes: icons and codex files. */
const DIST_FILE = /^dist\/(nodes|credentials)\/.+\.(js|json|svg|png)$/;

function checkPackContents(): string[] {
	const problems: string[] = [];
	const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: REPO_ROOT, encoding: 'utf8' });
	if (result.status !== 0) return [`npm pack --dry-run failed: ${result.stderr}`];
	const [pack] = JSON.parse(result.stdout) as Array<{ files: Array<{ path: string }>; size: number; entryCount: number }>;
	const files = pack.files.map((file) => file.path);
	for (const file of files) {
		if (!TOP_LEVEL_FILES.has(file) && !DIST_FILE.test(file)) problems.push(`ships ${file}, which n8n does not need`);
	}
	for (const file of TOP_LEVEL_FILES) if (!files.includes(file)) problems.push(`does not ship ${file}`);
	const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { main?: string; n8n: { nodes: string[]; credentials: string[] } };
	for (const file of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) {
		if (!files.includes(file)) problems.push(`package.json names ${file}, which is not in the package (run npm run build first)`);
	}
	if (manifest.main !== undefined && !files.includes(manifest.main)) problems.push(`"main" points at ${manifest.main}, which is not in the package`);
	if (problems.length === 0) console.log(`pack: ${pack.entryCount} files, ${(pack.size / 1024).toFixed(0)} kB packed; only dist/, README.md, LICENSE, package.json`);
	return problems;
}

/** The scanner's own verdict, and its findings one by one (same config, same options) to hold against the accepted list. */
async function scan(label: string, folder: string, patterns: string[], sourcePathOf: (file: string) => string, accepted: AcceptedFinding[]): Promise<string[]> {
	const scanner = await loadScanner();
	const verdict = await scanner.analyzePackage(folder, patterns);

	const eslint = new ESLint({ cwd: folder, allowInlineConfig: false, overrideConfigFile: true, overrideConfig: (await scanner.buildScanConfig()) as never });
	const files = fastGlob.sync(patterns, { cwd: folder, absolute: true, ignore: ['node_modules/**', '**/package-lock.json'] });
	const findings: Finding[] = (await eslint.lintFiles(files)).flatMap((result) =>
		result.messages.map((message) => ({ file: relative(folder, result.filePath), line: message.line, rule: message.ruleId ?? '(parser)', message: message.message, severity: message.severity })),
	);
	const hasErrors = findings.some((finding) => finding.severity === 2);
	if (verdict.passed === hasErrors) {
		return [`${label}: the scanner says ${verdict.passed ? 'passed' : `failed (${verdict.message})`}, but its rules found ${findings.length} findings:\n${verdict.details ?? ''}`];
	}
	const acceptedEntry = (finding: Finding) => accepted.find((entry) => entry.rule === finding.rule && entry.files.includes(sourcePathOf(finding.file)));
	const isAccepted = (finding: Finding) => acceptedEntry(finding) !== undefined;
	for (const finding of findings.filter(isAccepted)) {
		const reason = acceptedEntry(finding)?.reason;
		console.log(`${label}: accepted ${finding.rule} in ${finding.file}:${finding.line} (${reason})`);
	}
	const unexpected = findings.filter((finding) => !isAccepted(finding));
	if (unexpected.length === 0) console.log(`${label}: ${files.length} files, nothing beyond the accepted findings`);
	return unexpected.map((finding) => `${label}: ${finding.file}:${finding.line} ${finding.rule}: ${finding.message}`);
}

async function main() {
	const { ACCEPTED_FINDINGS } = (await import(pathToFileURL(join(__dirname, 'n8n-accepted-findings.mjs')).href)) as { ACCEPTED_FINDINGS: AcceptedFinding[] };
	const problems = checkPackContents();

	const scanner = await loadScanner();
	problems.push(...(await scan('scanner (source)', REPO_ROOT, scanner.SOURCE_FILE_PATTERNS, (file) => file, ACCEPTED_FINDINGS)));

	const work = mkdtempSync(join(tmpdir(), 'dgw-scan-'));
	try {
		const tarball = packPackage(work);
		const extracted = join(work, 'package');
		mkdirSync(extracted);
		const untar = spawnSync('tar', ['-xzf', tarball, '-C', extracted, '--strip-components=1']);
		if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
		// The registry scan lints the tarball's compiled JavaScript and its package.json.
		const sourceOf = (file: string) => file.replace(/^dist\//, '').replace(/\.js$/, '.ts');
		problems.push(...(await scan('scanner (tarball)', extracted, ['**/*.js', 'package.json'], sourceOf, ACCEPTED_FINDINGS)));
	} finally {
		rmSync(work, { recursive: true, force: true });
	}

	if (problems.length > 0) {
		console.error(`npm run scan found ${problems.length} problem(s):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
		process.exit(1);
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
