/**
 * Issue 35's "What done looks like", walked through in the editor as a new user does it: create a
 * signature and a template with the SMS node, let the gateway (the emulator) approve them and post
 * its review callbacks to the active SMS Trigger, then in a new Send node pick both from the lists
 * by name, see the template's text and variables, run Preview and Send; and a Template ID typed By
 * ID that does not exist is named in the form before any run.
 */
import assert from 'node:assert/strict';

import type { Locator, Page } from 'playwright-core';

import type { N8nRest } from '../../scripts/n8n-runtime';
import type { Credential } from './secondPass';
import { screenshot } from './shots';
import { openNode } from './workflows';
import { manualStart } from '../e2e/moneySafety';
import { sleep } from '../sandbox/npmStart';

const SMS = 'n8n-nodes-data-gateway.dataGatewaySms';

interface Ledger {
	byPath?: Record<string, { calls: number }>;
}
interface SentCallback {
	action: string;
	status: number | string;
}

/** The emulator's admin routes (test/emulator/admin.ts). */
class EmulatorAdmin {
	constructor(private readonly url: string) {}

	private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await fetch(`${this.url}/__emulator/${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
		assert.ok(response.ok, `emulator ${method} ${path} answered ${response.status}`);
		return (await response.json()) as T;
	}

	async calls(path: string): Promise<number> {
		return (await this.call<Ledger>('GET', 'ledger')).byPath?.[path]?.calls ?? 0;
	}

	async reviewDelay(): Promise<number> {
		return (await this.call<{ reviewDelayMs: number }>('GET', 'config')).reviewDelayMs;
	}

	async setReviewDelay(reviewDelayMs: number) {
		await this.call('PATCH', 'config', { reviewDelayMs });
	}

	async callbacks(): Promise<SentCallback[]> {
		return await this.call('GET', 'callbacks');
	}

	/** Ends one review now: the emulator approves it and posts its callback, as the gateway does. */
	async finishReview(id: string) {
		await this.call('POST', `finish/reviews?id=${encodeURIComponent(id)}`);
	}
}

const panel = (page: Page) => page.locator('[data-test-id="ndv"]');
const parameter = (page: Page, name: string) => panel(page).locator(`[data-test-id="parameter-input-${name}"]`);

/** Fills a text field of the open node as a user types it. */
async function fill(page: Page, name: string, value: string) {
	const field = parameter(page, name).locator('input, textarea').first();
	await field.click();
	await field.fill(value);
}

/** "Execute step" in the open node; waits for its output and returns the output panel's text. */
async function executeStep(page: Page, expected: RegExp): Promise<string> {
	await panel(page).locator('[data-test-id="node-execute-button"]').click();
	const output = page.locator('[data-test-id="output-panel"]');
	await output.getByText(expected).first().waitFor({ timeout: 60_000 });
	return await output.innerText();
}

/** The ID in the output panel, read off its JSON view. */
async function outputId(page: Page): Promise<string> {
	const output = page.locator('[data-test-id="output-panel"]');
	await output.locator('[data-test-id="radio-button-json"]').click();
	await output.getByText(/"id"/).first().waitFor();
	const text = await output.innerText();
	// n8n keeps the view chosen for every later output panel: back to Table, which the other checks read.
	await output.locator('[data-test-id="radio-button-table"]').click();
	const id = /"id":\s*"?(\d+)"?/.exec(text)?.[1];
	assert.ok(id, `the output shows the new ID:\n${text}`);
	return id;
}

interface Created {
	signatureId: string;
	templateId: string;
	signature: string;
	templateName: string;
	template: string;
}

/** Step 1: a new workflow with two SMS nodes of the newest version; each filled in and run with "Execute step". */
async function createBoth(page: Page, rest: N8nRest, url: string, credential: Credential, stamp: string): Promise<Created> {
	const latest = await rest.newestVersion(SMS);
	const smsNode = (id: string, name: string, resource: string, y: number) => ({
		id,
		name,
		type: SMS,
		typeVersion: latest,
		position: [240, y],
		credentials: { dataGatewayApi: credential },
		parameters: { resource, operation: 'create' },
	});
	const workflow = await rest.createWorkflow({
		name: 'Editor check: my signature and template',
		nodes: [manualStart, smsNode('c1', 'Create Signature', 'signature', -120), smsNode('c2', 'Create Template', 'template', 120)],
		connections: { Start: { main: [[{ node: 'Create Signature', type: 'main', index: 0 }, { node: 'Create Template', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	});
	const created = { signature: `走查科技${stamp}`, templateName: `走查登录码${stamp}`, template: '您的走查登录码是${code}，10分钟内有效。' } as Created;
	await page.goto(`${url}/workflow/${workflow.id}`);

	await openNode(page, 'Create Signature');
	await fill(page, 'name', created.signature);
	await fill(page, 'remark', 'Login codes for example.com');
	await executeStep(page, new RegExp(created.signature));
	await screenshot(page, 'catalogue-signature-created');
	created.signatureId = await outputId(page);
	await page.keyboard.press('Escape');

	await openNode(page, 'Create Template');
	await fill(page, 'name', created.templateName);
	await fill(page, 'content', created.template);
	await fill(page, 'remark', 'Login codes for example.com');
	await executeStep(page, new RegExp(created.templateName));
	await screenshot(page, 'catalogue-template-created');
	created.templateId = await outputId(page);
	await page.keyboard.press('Escape');
	return created;
}

/** Step 2: the emulator approves both and posts its review callbacks; the active SMS Trigger answers them. */
async function approveBoth(emulator: EmulatorAdmin, created: Created) {
	const heard = async () => (await emulator.callbacks()).filter((callback) => ['sign', 'template'].includes(callback.action) && callback.status === 200).length;
	const before = await heard();
	await emulator.finishReview(created.signatureId);
	await emulator.finishReview(created.templateId);
	// The trigger writes the result into the catalogue before it answers: an answered callback is recorded.
	const deadline = Date.now() + 30_000;
	while ((await heard()) < before + 2) {
		if (Date.now() > deadline) throw new Error(`the SMS Trigger did not answer both review callbacks: ${JSON.stringify(await emulator.callbacks())}`);
		await sleep(250);
	}
}

/** A new workflow: Start → Recipient → a new SMS node (newest version) on Preview, nothing picked yet. */
async function sendWorkflow(rest: N8nRest, credential: Credential, phone: string) {
	const latest = await rest.newestVersion(SMS);
	return await rest.createWorkflow({
		name: 'Editor check: send with what I picked',
		nodes: [
			manualStart,
			{
				id: 'p2',
				name: 'Recipient',
				type: 'n8n-nodes-base.set',
				typeVersion: 3.4,
				position: [220, 0],
				parameters: { assignments: { assignments: [{ id: 'a1', name: 'phone', value: phone, type: 'string' }] }, options: {} },
			},
			{ id: 'p3', name: 'Login Code', type: SMS, typeVersion: latest, position: [440, 0], credentials: { dataGatewayApi: credential }, parameters: { resource: 'message', operation: 'preview', phone: '={{ $json.phone }}' } },
		],
		connections: { Start: { main: [[{ node: 'Recipient', type: 'main', index: 0 }]] }, Recipient: { main: [[{ node: 'Login Code', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	});
}

const picker = (page: Page, field: string) => panel(page).locator(`[data-test-id="resource-locator-${field}"]`);

/** Opens a picker's list and searches it; returns the entries listed for `name`. */
async function search(page: Page, field: string, name: string): Promise<Locator> {
	await picker(page, field).locator('[data-test-id="rlc-input"]').click();
	await page.locator('[data-test-id="rlc-search"]').fill(name);
	const entries = page.locator('[data-test-id="rlc-item"]', { hasText: name });
	await entries.first().waitFor();
	return entries;
}

/** The new node, as it first opens: nothing picked, no notice, and a hint under Template Variables that says how to reload the variables when n8n does not. */
async function firstLook(page: Page) {
	await openNode(page, 'Login Code');
	await panel(page).getByText(/Variables appear below once a template is picked; if not, click Execute previous nodes/).waitFor();
	await screenshot(page, 'catalogue-new-send-node');
	assert.equal(await panel(page).locator('[data-test-id="empty-fields-notice"]').count(), 0, 'no notice before a template is picked');
}

/** Opens the Send node with its input run ("Execute previous nodes", as the input panel offers): its Phone expression then resolves. */
async function openSendNode(page: Page) {
	await openNode(page, 'Login Code');
	const input = page.locator('[data-test-id="ndv-input-panel"]');
	const run = input.getByRole('button', { name: 'Execute previous nodes' });
	await Promise.race([run.waitFor(), input.getByText('1 item').waitFor()]);
	if (await run.isVisible()) await run.click();
	await input.getByText('1 item').waitFor();
}

/** Step 2 as the Send node's list shows it: under review before the callback, approved after it, with no template query for the list. */
async function listBeforeAndAfterReview(page: Page, emulator: EmulatorAdmin, created: Created) {
	const listed = async () => (await (await search(page, 'templateId', created.templateName)).allInnerTexts()).map((text) => text.trim());
	const before = await listed();
	await screenshot(page, 'catalogue-list-under-review');
	assert.deepEqual(before, [`${created.templateName} · #${created.templateId} · under review · ${created.template}`], 'before the review the list says "under review"');
	await page.keyboard.press('Escape');
	await page.keyboard.press('Escape');

	await approveBoth(emulator, created);
	const queries = await emulator.calls('/sms/query_template');
	await openSendNode(page);
	const after = await listed();
	await screenshot(page, 'catalogue-list-approved');
	assert.deepEqual(after, [`${created.templateName} · #${created.templateId} · ${created.template}`], 'after the approval callback the list shows it approved (no status word)');
	assert.equal(await emulator.calls('/sms/query_template'), queries, 'the list read the catalogue: no template query');
}

/** Step 3: pick both by name; the form shows the template's variable with its text; Preview, then Send. */
async function pickPreviewSend(page: Page, emulator: EmulatorAdmin, created: Created) {
	await (await search(page, 'templateId', created.templateName)).first().click();
	await (await search(page, 'signId', created.signature)).first().click();
	const fields = panel(page).locator('[data-test-id="mapping-fields-container"]');
	await fields.getByText('code', { exact: true }).waitFor();
	const picked = await picker(page, 'templateId').locator('[data-test-id="rlc-input"]').inputValue();
	await screenshot(page, 'catalogue-picked-by-name');
	// The list entry picked, with the template's text, stays in the field; its one variable has its own input.
	assert.equal(picked, `${created.templateName} · #${created.templateId} · ${created.template}`, 'the Template field shows what was picked');
	assert.equal(await picker(page, 'signId').locator('[data-test-id="rlc-input"]').inputValue(), `${created.signature} · #${created.signatureId}`);
	await fields.locator('input').first().fill('246810');

	const message = `【${created.signature}】您的走查登录码是246810，10分钟内有效。`;
	await executeStep(page, /Preview only: no SMS sent/);
	// The table fills in after the hint: wait for the message itself.
	const shown = page.locator('[data-test-id="output-panel"]').getByText(message);
	await shown.first().waitFor().catch(() => undefined);
	const preview = await page.locator('[data-test-id="output-panel"]').innerText();
	await screenshot(page, 'catalogue-preview');
	assert.ok(preview.includes(message), `Preview shows the exact message:\n${preview}`);
	assert.match(preview, /Preview only: no SMS sent, 0 yuan; sending this SMS would cost 0\.035 yuan when delivered \(1 message segment\)/);

	const sends = await emulator.calls('/sms/send');
	await parameter(page, 'operation').click();
	// Each option shows its description too: "Send" is the one that sends with an approved signature and template.
	await page.getByText('Send an SMS with an approved signature and template').click();
	const sent = await executeStep(page, /1 SMS sent/);
	await screenshot(page, 'catalogue-sent');
	assert.match(sent, /1 SMS sent, 1 message segment, 0\.035 yuan when delivered/, `the bill hint after Send:\n${sent}`);
	assert.equal(await emulator.calls('/sms/send'), sends + 1, 'Send made one paid call');
}

/** Step 4: Template By ID 502 (none exists): the form says so in the gateway's words before any run, and nothing is paid. */
async function wrongIdById(page: Page, emulator: EmulatorAdmin) {
	const sends = await emulator.calls('/sms/send');
	await picker(page, 'templateId').locator('[data-test-id="rlc-mode-selector"]').click();
	await page.getByRole('option', { name: 'By ID' }).click();
	const input = picker(page, 'templateId').locator('[data-test-id="rlc-input"]');
	await input.fill('502');
	await input.press('Tab');
	const notice = panel(page).locator('[data-test-id="empty-fields-notice"]');
	await notice.getByText(/Template 502 not found/).waitFor();
	const text = (await notice.innerText()).trim();
	await notice.scrollIntoViewIfNeeded();
	await screenshot(page, 'catalogue-template-502-not-found');
	assert.match(text, /^Template 502 not found \(the gateway says "template not found"\)/, `the notice under the field: "${text}"`);
	assert.equal(await emulator.calls('/sms/send'), sends, 'no paid call');
}

export async function checkCatalogueWalkThrough(page: Page, rest: N8nRest, url: string, emulatorUrl: string, credential: Credential) {
	const emulator = new EmulatorAdmin(emulatorUrl);
	const stamp = String(Date.now()).slice(-6);
	// Reviews wait until this walk-through ends them, as a reviewer would: no race with the clock.
	const reviewDelay = await emulator.reviewDelay();
	await emulator.setReviewDelay(3_600_000);
	let created: Created;
	try {
		created = await createBoth(page, rest, url, credential, stamp);
		const workflow = await sendWorkflow(rest, credential, `1390035${stamp.slice(-4)}`);
		await page.goto(`${url}/workflow/${workflow.id}`);
		await firstLook(page);
		await openSendNode(page);
		await listBeforeAndAfterReview(page, emulator, created);
	} finally {
		await emulator.setReviewDelay(reviewDelay);
	}
	await pickPreviewSend(page, emulator, created);
	await wrongIdById(page, emulator);
	await page.keyboard.press('Escape');
}
