/**
 * Issue 42's tasks, walked as a new user in the editor, each asserting what the user sees with a
 * screenshot per step: pick a signature and template in a fresh sandbox (npm start seeds the
 * emulator's demo ones); the Send form's height and notices in its default state, measured; change
 * the template and back with the variable's value kept; Import with a range and its summary; the
 * credential's sections; the trigger's notices with and without a URL Token.
 */
import assert from 'node:assert/strict';

import type { Page } from 'playwright-core';

import type { N8nRest } from '../../scripts/n8n-runtime';
import { manualStart } from '../e2e/moneySafety';
import type { Credential } from './secondPass';
import { screenshot } from './shots';
import { openNode } from './workflows';

const SMS = 'n8n-nodes-data-gateway.dataGatewaySms';
const TRIGGER = 'n8n-nodes-data-gateway.dataGatewaySmsTrigger';
const log = (text: string) => console.log(`[editor] ${text}`);

const panel = (page: Page) => page.locator('[data-test-id="ndv"]');
const picker = (page: Page, field: string) => panel(page).locator(`[data-test-id="resource-locator-${field}"]`);
const variables = (page: Page) => panel(page).locator('[data-test-id="mapping-fields-container"]');
const emptyNotice = (page: Page) => panel(page).locator('[data-test-id="empty-fields-notice"]');

async function smsWorkflow(rest: N8nRest, credential: Credential, name: string, parameters: Record<string, unknown>) {
	const latest = await rest.newestVersion(SMS);
	return await rest.createWorkflow({
		name,
		nodes: [manualStart, { id: 'n2', name: 'SMS', type: SMS, typeVersion: latest, position: [240, 0], credentials: { dataGatewayApi: credential }, parameters }],
		connections: { Start: { main: [[{ node: 'SMS', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	});
}

/** Opens a picker's list and clicks the entry whose text starts with `label`; returns every entry's text. */
async function pick(page: Page, field: string, label: string): Promise<string[]> {
	await picker(page, field).locator('[data-test-id="rlc-input"]').click();
	const entries = page.locator('[data-test-id="rlc-item"]');
	await entries.first().waitFor();
	const texts = (await entries.allInnerTexts()).map((text) => text.trim());
	await entries.filter({ hasText: label }).first().click();
	return texts;
}

/**
 * The notices the open node shows: n8n renders a parameter notice as an element with role "alert"
 * or a class naming a notice; read by text so a change of n8n's markup fails loudly, not silently.
 */
async function noticeTexts(page: Page): Promise<string[]> {
	return await panel(page).evaluate((root) =>
		[...root.querySelectorAll('.parameter-item')]
			.filter((element) => /notice/i.test(element.className) || element.querySelector('[class*="notice" i]') !== null)
			.map((element) => (element as unknown as { innerText: string }).innerText.trim())
			.filter(Boolean),
	);
}

/** The parameters pane: its visible height, its content's height, and where each field ends (from the top of the content). */
async function measurePane(page: Page) {
	return await panel(page).evaluate((root) => {
		type Box = { top: number; bottom: number };
		type Element = { parentElement: Element | null; scrollHeight: number; clientHeight: number; scrollTop: number; innerText: string; getBoundingClientRect(): Box };
		const style = (globalThis as unknown as { getComputedStyle: (element: unknown) => { overflowY: string } }).getComputedStyle;
		const items = [...root.querySelectorAll('.parameter-item')] as unknown as Element[];
		let scroller = items[0]?.parentElement ?? null;
		while (scroller && !/(auto|scroll)/.test(style(scroller).overflowY)) scroller = scroller.parentElement;
		if (!scroller) return { clientHeight: 0, scrollHeight: 0, items: [] as Array<{ label: string; bottom: number }> };
		const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
		return {
			clientHeight: scroller.clientHeight,
			scrollHeight: scroller.scrollHeight,
			items: items.map((item) => ({ label: item.innerText.trim().split('\n')[0].slice(0, 40), bottom: Math.round(item.getBoundingClientRect().bottom - top) })),
		};
	});
}

/** A fresh sandbox: the lists hold the emulator's demo signature and templates; the form is short; a value survives a template change. */
export async function checkFreshSendForm(page: Page, rest: N8nRest, url: string, credential: Credential) {
	const workflow = await smsWorkflow(rest, credential, 'Editor check: a first send', { resource: 'message', operation: 'send', phone: '13900035099' });
	await page.goto(`${url}/workflow/${workflow.id}`);
	await openNode(page, 'SMS');
	await picker(page, 'templateId').waitFor();
	// Measured once the form has loaded: Options shows its empty state, the variables stopped fetching.
	await panel(page).getByText('No properties').first().waitFor();
	await panel(page).getByText(/Fetching variables|Loading fields/).first().waitFor({ state: 'hidden' });

	// The default state, measured: the notices, and the parameters pane's height against what it shows.
	await screenshot(page, 'third-send-form-default');
	const notices = await noticeTexts(page);
	const pane = await measurePane(page);
	log(`Send form, default state at 1440x900: notices ${JSON.stringify(notices)}; pane ${pane.clientHeight} px shows ${pane.scrollHeight} px of content; fields ${JSON.stringify(pane.items)}`);
	assert.ok(notices.length <= 1, `at most one notice by default: ${JSON.stringify(notices)}`);
	if (notices.length === 1) assert.match(notices[0], /^Prices: Send 0\.035 yuan/);
	assert.ok(pane.clientHeight > 0 && pane.scrollHeight <= pane.clientHeight + 2, `no scrolling: ${pane.scrollHeight} px of content in a ${pane.clientHeight} px pane`);
	const text = await panel(page).innerText();
	for (const gone of ['Not listed?', 'Each item is texted at most once', 'Choose the template first', 'Pick a template above']) assert.ok(!text.includes(gone), `"${gone}" is not in the default form`);

	// Pick by name: the seeded demo objects are listed.
	const signatures = await pick(page, 'signId', '数据网关');
	const templates = await pick(page, 'templateId', '验证码');
	await variables(page).getByText('code', { exact: true }).waitFor();
	await screenshot(page, 'third-picked-in-fresh-sandbox');
	assert.ok(signatures.some((entry) => entry.startsWith('数据网关 · #')), `the signature list: ${JSON.stringify(signatures)}`);
	assert.ok(templates.some((entry) => entry.startsWith('验证码 · #')) && templates.some((entry) => entry.startsWith('通知 · #')), `the template list: ${JSON.stringify(templates)}`);
	assert.ok(!(await panel(page).innerText()).includes('Not listed?'), 'no hint after a pick');

	// Change the template and back: the value typed for ${code} is kept.
	await variables(page).locator('input').first().fill('135790');
	await variables(page).locator('input').first().press('Tab');
	await pick(page, 'templateId', '通知');
	await emptyNotice(page).getByText(/Not in this template: \$\{code\}/).waitFor();
	await screenshot(page, 'third-template-changed-value-named');
	await pick(page, 'templateId', '验证码');
	await variables(page).getByText('code', { exact: true }).waitFor();
	const kept = await variables(page).locator('input').first().inputValue();
	await screenshot(page, 'third-template-back-value-kept');
	assert.equal(kept, '135790', 'the value of ${code} survived the template change');
	await page.keyboard.press('Escape');
}

/** Import with a range: one summary item, and a bill that counts every query. */
export async function checkImportRange(page: Page, rest: N8nRest, url: string, credential: Credential) {
	const workflow = await smsWorkflow(rest, credential, 'Editor check: import a range', { resource: 'template', operation: 'import', ids: '1000-1010' });
	await page.goto(`${url}/workflow/${workflow.id}`);
	await openNode(page, 'SMS');
	await panel(page).locator('[data-test-id="node-execute-button"]').click();
	const output = page.locator('[data-test-id="output-panel"]');
	await output.getByText(/11 free calls/).first().waitFor({ timeout: 60_000 });
	await output.getByText(/Found 2 of 11 template IDs/).first().waitFor();
	const text = await output.innerText();
	await screenshot(page, 'third-import-range-summary');
	assert.match(text, /11 free calls, 0 yuan; 2 found; 9 not found/);
	assert.match(text, /Not found: 1000, 1003-1010|Not found: 1003-1010/);
	assert.match(text, /1 item/);
	await page.keyboard.press('Escape');
}

/** The credential reads in sections: Connection, Money, Telephone plan, Shared Redis. */
export async function checkCredentialSections(page: Page, url: string, credentialName: string) {
	await page.goto(`${url}/home/credentials`);
	await page.getByText(credentialName, { exact: true }).first().click();
	const modal = page.locator('[data-test-id="editCredential-modal"]');
	await modal.getByText(/Shared Redis \(optional\)/).first().waitFor();
	const text = await modal.innerText();
	await screenshot(page, 'third-credential-sections');
	const at = ['Connection:', 'Money:', 'Telephone plan:', 'Shared Redis (optional):'].map((heading) => text.indexOf(heading));
	assert.ok(at.every((index, i) => index >= 0 && (i === 0 || index > at[i - 1])), `the four sections in order: ${JSON.stringify(at)}`);
	assert.match(text, /This account's spend in all n8n processes, kept in the shared store/);
	await page.keyboard.press('Escape');
}

/** The trigger's notices are the same, and true, with and without a URL Token. */
export async function checkTriggerNotices(page: Page, rest: N8nRest, url: string) {
	const seen: string[][] = [];
	for (const [label, security] of [
		['without-token', {}],
		['with-token', { token: 'third-pass-token-42' }],
	] as const) {
		const workflow = await rest.createWorkflow({
			name: `Editor check: trigger notices ${label}`,
			nodes: [{ id: 't1', name: 'SMS Events', type: TRIGGER, typeVersion: await rest.newestVersion(TRIGGER), position: [0, 0], webhookId: `42000000-0000-4000-8000-00000000000${seen.length}`, parameters: { events: ['report'], security } }],
			connections: {},
			settings: { executionOrder: 'v1' },
		});
		await page.goto(`${url}/workflow/${workflow.id}`);
		await openNode(page, 'SMS Events');
		await panel(page).getByText(/set the callback URL \(回调地址\)/).waitFor();
		const notices = await noticeTexts(page);
		await screenshot(page, `third-trigger-notices-${label}`);
		seen.push(notices);
		await page.keyboard.press('Escape');
	}
	log(`trigger notices: ${JSON.stringify(seen[0])}`);
	assert.deepEqual(seen[1], seen[0], 'the same notices with and without a token');
	assert.equal(seen[0].length, 3);
	assert.ok(!seen.flat().some((text) => /Without a Security check/.test(text)), 'no notice says the URL is open');
}
