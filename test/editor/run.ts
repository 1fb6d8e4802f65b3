/**
 * `npm run test:editor`: the nodes as a new user meets them in n8n 2.x's editor, in a real
 * Chromium (Debian's, driven by playwright-core), against `npm start` on free ports with a
 * throwaway sandbox. Checks the node creator, the credential's Test button, every example run
 * green from the editor, the error output, the bill hint, signatures and templates picked by name
 * (catalogue.ts) and the browser console; saves a
 * screenshot of each step under test-results/editor/ (EDITOR_SCREENSHOTS moves it).
 *
 * EDITOR_TEST_URL=http://127.0.0.1:5678 EMULATOR_URL=http://127.0.0.1:8787 reuses a running
 * `npm start` instead (its default owner must still log in).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';

import { chromium, type Browser, type Page } from 'playwright-core';

import { loginOwner, N8nRest } from '../../scripts/n8n-runtime';
import { CREDENTIAL_ID, credentialNameFor, loadExamples, SANDBOX_OWNER, webhookPathOf, type ExampleWorkflow } from '../../scripts/sandbox';
import { newSandbox, npmStart, stopAll, waitReady, type NpmStart } from '../sandbox/npmStart';
import { checkCredential, checkNodeCreator } from './creator';
import { screenshot, SCREENSHOTS } from './shots';
import { checkPreview, checkRefusedWhileListening, checkRepeatWarning, checkSmsForm, checkSubtitlesAndDocs, checkTestUrlGetsSends, checkTriggerUrl } from './secondPass';
import { checkItemNamedOnce } from './errorItems';
import { checkCatalogueWalkThrough } from './catalogue';
import { checkCredentialSections, checkFreshSendForm, checkImportRange, checkTriggerNotices } from './thirdPass';
import { billHint, checkErrorBranch, openNode, runFromEditor } from './workflows';

const CHROMIUM = '/usr/bin/chromium';
/** As the machine notes say: without the networking flags Chromium calls out at every start and is refused. */
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const log = (text: string) => console.log(`[editor] ${text}`);

/** The execution hint each example's lookup or send shows after a run from the editor. */
const BILLS: Record<string, { node: string; hint: RegExp }> = {
	dgwExamplePhones: { node: 'Identify Numbers', hint: /^5 free calls, 0 yuan .*; 3 repeated numbers answered without a new call(; \d+ calls today)?$/ },
	dgwExampleSend: { node: 'Send Code', hint: /^1 SMS sent, 1 message segment, 0\.035 yuan when delivered$/ },
};

/** Debian's chromium and a CJK font (the nodes show Chinese), installed with apt when missing (as root, as on CI). */
function ensureChromium() {
	const fonts = spawnSync('dpkg', ['-s', 'fonts-wqy-microhei'], { encoding: 'utf8' }).status === 0;
	if (existsSync(CHROMIUM) && fonts) return;
	if (process.getuid?.() !== 0) throw new Error(`${CHROMIUM} or fonts-wqy-microhei is missing: apt-get install chromium fonts-wqy-microhei (or run as root so the suite installs them)`);
	log('installing chromium and fonts-wqy-microhei with apt (once)');
	for (const args of [['update', '-qq'], ['install', '-y', '-qq', 'chromium', 'fonts-wqy-microhei']]) {
		const result = spawnSync('apt-get', args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
		if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
	}
}

interface Sandbox {
	url: string;
	emulatorUrl: string;
	stop(): Promise<void>;
}

async function startSandbox(): Promise<Sandbox> {
	if (process.env.EDITOR_TEST_URL && process.env.EMULATOR_URL) {
		return { url: process.env.EDITOR_TEST_URL, emulatorUrl: process.env.EMULATOR_URL, stop: async () => {} };
	}
	const { env, sandboxDir, n8nPort, emulatorPort } = await newSandbox('dgw-editor-test-');
	const running: NpmStart[] = [npmStart(env)];
	try {
		await waitReady(running[0]);
	} catch (error) {
		await stopAll(running);
		rmSync(sandboxDir, { recursive: true, force: true });
		throw error;
	}
	return {
		url: `http://127.0.0.1:${n8nPort}`,
		emulatorUrl: `http://127.0.0.1:${emulatorPort}`,
		stop: async () => {
			await stopAll(running);
			rmSync(sandboxDir, { recursive: true, force: true });
		},
	};
}

async function signIn(page: Page, url: string) {
	await page.goto(`${url}/signin`);
	await page.locator('input[type=email]').fill(SANDBOX_OWNER.email);
	await page.locator('input[type=password]').fill(SANDBOX_OWNER.password);
	await page.keyboard.press('Enter');
	await page.waitForURL(/\/home|\/workflow/, { timeout: 60_000 });
}

/** A callback as the gateway posts it, for the trigger examples while the editor listens. */
function callbackFor(example: ExampleWorkflow): Record<string, unknown> {
	const now = '2026-11-22 09:00:00';
	// A new id each run: the trigger starts a workflow once per event within its duplicate window.
	const id = Date.now();
	const events = (example.nodes.find((node) => node.type.endsWith('dataGatewaySmsTrigger'))?.parameters.events ?? []) as string[];
	if (events.includes('report')) {
		return { action: 'report', sms: { id: `editor-task-${id}`, phone: '13912345678', content: '【数据网关】您的验证码是123456', sendDate: now, receiveDate: now, status: 1, message: '' } };
	}
	return { action: 'sign', sign: { id, user_id: 1, name: '数据网关', remark: 'editor check', status: 1, error: null, create_time: now, update_time: now } };
}

async function main() {
	const started = Date.now();
	ensureChromium();
	rmSync(SCREENSHOTS, { recursive: true, force: true });
	mkdirSync(SCREENSHOTS, { recursive: true });
	const sandbox = await startSandbox();
	log(`sandbox ready in ${Math.round((Date.now() - started) / 1000)} s at ${sandbox.url}`);
	let browser: Browser | undefined;
	const failures: string[] = [];
	// EDITOR_ONLY=thirdPass (or any words of the checks' names) runs only the checks that name it, while iterating.
	const only = process.env.EDITOR_ONLY?.toLowerCase();
	const check = async (name: string, run: () => Promise<void>) => {
		if (only && !only.split(',').some((words) => name.toLowerCase().includes(words.trim()))) return;
		try {
			await run();
			log(`ok: ${name}`);
		} catch (error) {
			failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
			log(`FAILED: ${name}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
		}
	};
	try {
		const rest = new N8nRest(sandbox.url, await loginOwner(sandbox.url, SANDBOX_OWNER));
		browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
		const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
		const page = await context.newPage();
		page.setDefaultTimeout(30_000);
		const consoleErrors: string[] = [];
		page.on('console', (message) => {
			if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
		});
		page.on('pageerror', (error) => consoleErrors.push(`${error.message}\n${error.stack ?? ''}`));
		await signIn(page, sandbox.url);

		const examples = Object.values(loadExamples());

		// Issue 42 first, in the fresh sandbox: nothing has been created or imported yet.
		const credentialRef = { id: CREDENTIAL_ID, name: credentialNameFor(sandbox.emulatorUrl, true) };
		await check('third pass: a fresh sandbox lists the demo signature and templates; the Send form is short; a value survives a template change', async () => await checkFreshSendForm(page, rest, sandbox.url, credentialRef));
		await check('third pass: Import with a range sums up in one item and bills every query', async () => await checkImportRange(page, rest, sandbox.url, credentialRef));
		await check("third pass: the credential's sections", async () => await checkCredentialSections(page, sandbox.url, credentialRef.name));
		await check("third pass: the trigger's notices with and without a token", async () => await checkTriggerNotices(page, rest, sandbox.url));

		await check('the node creator finds all five nodes, and each lists its actions', async () => await checkNodeCreator(page, sandbox.url, 'dgwExamplePhones'));
		await check("the credential's Test passes, and fails clearly with a wrong code", async () => await checkCredential(page, sandbox.url, credentialNameFor(sandbox.emulatorUrl, true), sandbox.emulatorUrl));

		for (const example of examples) {
			await check(`"${example.name}" executes green from the editor`, async () => {
				// The SMS Trigger's path, or an n8n Webhook node's (the order example): the editor listens on its Test URL.
				const webhookNode = example.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
				const path = webhookPathOf(example) ?? (webhookNode ? `webhook/${String(webhookNode.parameters.path)}` : undefined);
				// The opt-out example takes a number; the order example an order.
				const webhookBody = webhookNode?.parameters.path === 'data-gateway-opt-out' ? { phone: '13900007777' } : { orderId: `editor-${Date.now()}`, company: '北京示例科技有限公司' };
				const body = webhookNode ? webhookBody : callbackFor(example);
				const callback = path
					? async () => {
							const response = await fetch(`${sandbox.url}/${path.replace(/^webhook\//, 'webhook-test/')}`, {
								method: 'POST',
								headers: { 'content-type': 'application/json', 'x-service-event': 'sms' },
								body: JSON.stringify(body),
							});
							return { status: response.status, body: (await response.text()).slice(0, 300) };
						}
					: undefined;
				const status = await runFromEditor(page, rest, sandbox.url, example, callback);
				await screenshot(page, `example-${example.id}`);
				assert.equal(status, 'success', `"${example.name}" ended ${status}`);
				const bill = BILLS[example.id];
				if (bill) {
					const hints = await billHint(page, bill.node);
					await screenshot(page, `bill-${example.id}`);
					await page.keyboard.press('Escape');
					assert.ok(hints.some((hint) => bill.hint.test(hint)), `the bill hint of "${bill.node}": ${JSON.stringify(hints)}`);
				}
			});
		}

		await check("the trigger's notices name the gateway setting and the editor's own buttons", async () => {
			await page.goto(`${sandbox.url}/workflow/dgwExampleDeliveryReports`);
			await openNode(page, 'Delivery Report');
			const panel = page.locator('[data-test-id="ndv"]');
			await panel.getByText(/In the gateway console.s SMS settings, set the callback URL/).waitFor();
			const text = await panel.innerText();
			await screenshot(page, 'trigger-notices');
			await page.keyboard.press('Escape');
			// The notice tells users to click "Execute step": the editor must show a button of that name.
			assert.match(text, /The Test URL listens only after "Execute step"/);
			assert.ok((text.match(/Execute step/g) ?? []).length >= 2, `the panel shows an "Execute step" button besides the notice:\n${text}`);
		});

		const credential = { id: CREDENTIAL_ID, name: credentialNameFor(sandbox.emulatorUrl, true) };
		await check("a new SMS node offers its template's variables by name and shows the prices", async () => await checkSmsForm(page, rest, sandbox.url, credential));
		await check('Preview shows the exact message and its cost, and sends nothing', async () => await checkPreview(page, rest, sandbox.url, credential, sandbox.emulatorUrl));
		await check('a second test send is skipped with a warning that says how to send again', async () => await checkRepeatWarning(page, rest, sandbox.url, credential));
		await check("a new SMS Trigger's URL carries its token; callbacks that start nothing show while listening; a send reaches the Test URL", async () => {
			const trigger = await checkTriggerUrl(page, rest, sandbox.url);
			await checkRefusedWhileListening(page, rest, sandbox.url, trigger);
			await checkTestUrlGetsSends(page, rest, sandbox.url, credential);
		});
		await check(
			'a new user creates a signature and a template, the review callback approves them in the list without a query, a new Send node picks both by name, shows the text and variables, previews and sends; Template By ID 502 says "not found" before any run',
			async () => await checkCatalogueWalkThrough(page, rest, sandbox.url, sandbox.emulatorUrl, credential),
		);
		await check('canvas subtitles read "operation: resource" in words; Docs links keep their #section', async () => await checkSubtitlesAndDocs(page, sandbox.url));

		await check('"Continue (using error output)" shows the failed item on the Error branch', async () => {
			try {
				await checkErrorBranch(page, rest, sandbox.url, { id: CREDENTIAL_ID, name: credentialNameFor(sandbox.emulatorUrl, true) });
			} finally {
				await screenshot(page, 'error-branch');
			}
		});
		await check('from 1.3 the Error branch keeps the failed item\'s input (its phone) beside error and message', async () => {
			try {
				await checkErrorBranch(page, rest, sandbox.url, { id: CREDENTIAL_ID, name: credentialNameFor(sandbox.emulatorUrl, true) }, 1.3);
			} finally {
				await screenshot(page, 'error-branch-keeps-input');
			}
		});
		await check('the error that stops a node names its item once, counted from 1 (no " [item 0]")', async () => await checkItemNamedOnce(page, rest, sandbox.url, credential));

		await check('the browser console shows no errors from the package', async () => {
			// The editor itself looks the package up on its registry for the node details panel; offline that
			// request to another host fails in the browser. It is n8n's request, not the package's code.
			const registryLookups = consoleErrors.filter((text) => text.startsWith('Failed to load resource') && /\(https?:\/\/[^)]+\)$/.test(text) && !text.includes(`(${sandbox.url}/`));
			const ours = consoleErrors.filter((text) => /data-?gateway/i.test(text) && !registryLookups.includes(text));
			assert.deepEqual(ours, [], `console errors from the package:\n${ours.join('\n')}`);
			log(`console: ${consoleErrors.length} error line(s) (${registryLookups.length} of them the editor's own registry lookups), none from the package`);
		});
	} finally {
		await browser?.close();
		await sandbox.stop();
	}
	log(`screenshots: ${SCREENSHOTS}`);
	if (failures.length > 0) {
		console.error(`[editor] ${failures.length} check(s) failed:\n- ${failures.join('\n- ')}`);
		process.exit(1);
	}
	log(`passed in ${Math.round((Date.now() - started) / 1000)} s`);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
