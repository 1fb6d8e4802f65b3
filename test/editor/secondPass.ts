/**
 * Issue 26, seen as a new user sees it: the SMS form that reads its template, Preview, the repeat
 * warning, and the SMS Trigger's URL, refusals while listening and the Test URL in `npm start`.
 */
import assert from 'node:assert/strict';

import type { Page } from 'playwright-core';

import { readmeUrl } from '../../nodes/shared/n8n/readmeLink';
import type { ExecutionSummary, N8nRest } from '../../scripts/n8n-runtime';
import type { ExampleWorkflow } from '../../scripts/sandbox';
import { sleep } from '../sandbox/npmStart';
import { screenshot } from './shots';
import { billHint, openNode, runFromEditor } from './workflows';

const SMS = 'n8n-nodes-data-gateway.dataGatewaySms';
const TRIGGER = 'n8n-nodes-data-gateway.dataGatewaySmsTrigger';
/** The emulator's demo signature and template (`您的验证码是${code}，5分钟内有效。`). */
const DEMO = { signId: '1000', templateId: '1001' };

export interface Credential {
	id: string;
	name: string;
}

const start = { id: 's1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} };
const recipient = (phone: string, code: string) => ({
	id: 's2',
	name: 'Recipient',
	type: 'n8n-nodes-base.set',
	typeVersion: 3.4,
	position: [220, 0],
	parameters: { assignments: { assignments: [{ id: 'a1', name: 'phone', value: phone, type: 'string' }, { id: 'a2', name: 'code', value: code, type: 'string' }] }, options: {} },
});
const chain = (...names: string[]) => Object.fromEntries(names.slice(0, -1).map((name, index) => [name, { main: [[{ node: names[index + 1], type: 'main', index: 0 }]] }]));

/** A manual workflow Start → Recipient → one SMS node. */
async function smsWorkflow(rest: N8nRest, name: string, sms: Record<string, unknown>, credential: Credential, recipientData: [string, string]) {
	return (await rest.createWorkflow({
		name,
		nodes: [start, recipient(...recipientData), { id: 's3', name: 'SMS', type: SMS, position: [440, 0], credentials: { dataGatewayApi: credential }, ...sms }],
		connections: chain('Start', 'Recipient', 'SMS'),
		settings: { executionOrder: 'v1' },
	})) as unknown as ExampleWorkflow;
}

/** A new SMS node (1.2) with a Template ID offers the template's variable by name, and shows the prices. */
export async function checkSmsForm(page: Page, rest: N8nRest, url: string, credential: Credential) {
	const workflow = await smsWorkflow(
		rest,
		'Editor check: SMS form',
		{ typeVersion: 1.2, parameters: { resource: 'message', operation: 'send', ...DEMO, phone: '={{ $json.phone }}' } },
		credential,
		['13900051001', '1234'],
	);
	await page.goto(`${url}/workflow/${workflow.id}`);
	await openNode(page, 'SMS');
	const panel = page.locator('[data-test-id="ndv"]');
	try {
		await panel.getByText(/Prices: Send 0\.035 yuan per segment/).waitFor();
		// "From the Template" is the default: the resource mapper lists the template's one variable by its name.
		await panel.locator('[data-test-id="mapping-fields-container"]').getByText('code', { exact: true }).first().waitFor({ timeout: 30_000 });
	} finally {
		await screenshot(page, 'sms-form-template-variables');
	}
	const text = await panel.innerText();
	await page.keyboard.press('Escape');
	assert.doesNotMatch(text, /Signature ID\s*\n\s*12\s*\n/, 'the Signature ID placeholder does not read as a value');
}

/** Preview from the editor: the exact message, nothing sent, its bill line. */
export async function checkPreview(page: Page, rest: N8nRest, url: string, credential: Credential, emulatorUrl: string) {
	const sendsBefore = await sendCount(emulatorUrl);
	const workflow = await smsWorkflow(
		rest,
		'Editor check: SMS preview',
		{
			typeVersion: 1.2,
			parameters: {
				resource: 'message',
				operation: 'preview',
				...DEMO,
				phone: '={{ $json.phone }}',
				variablesInput: 'keyValue',
				variables: { variable: [{ name: 'code', value: '={{ $json.code }}' }] },
			},
		},
		credential,
		['13900052001', '246810'],
	);
	assert.equal(await runFromEditor(page, rest, url, workflow), 'success', 'the preview run ends green');
	const hints = await billHint(page, 'SMS');
	const output = await page.locator('[data-test-id="output-panel"]').innerText();
	await screenshot(page, 'sms-preview');
	await page.keyboard.press('Escape');
	assert.ok(hints.some((hint) => /^Preview only: no SMS sent, 0 yuan; sending this SMS would cost 0\.035 yuan/.test(hint)), `the preview's bill line: ${JSON.stringify(hints)}`);
	assert.match(output, /【数据网关】您的验证码是246810，5分钟内有效。/, `the output shows the exact message:\n${output}`);
	assert.equal(await sendCount(emulatorUrl), sendsBefore, 'the preview sent nothing');
}

async function sendCount(emulatorUrl: string): Promise<number> {
	const ledger = (await (await fetch(`${emulatorUrl}/__emulator/ledger`)).json()) as { byPath?: Record<string, { calls: number }> };
	return ledger.byPath?.['/sms/send']?.calls ?? 0;
}

/** The same send run twice from the editor: the second is skipped as a repeat, and a warning says how to send again. */
export async function checkRepeatWarning(page: Page, rest: N8nRest, url: string, credential: Credential) {
	const workflow = await smsWorkflow(
		rest,
		'Editor check: a second test send',
		{
			typeVersion: 1.1,
			parameters: {
				resource: 'message',
				operation: 'send',
				...DEMO,
				phone: '={{ $json.phone }}',
				variablesInput: 'keyValue',
				variables: { variable: [{ name: 'code', value: '={{ $json.code }}' }] },
				sendOptions: { perMinute: 5 },
			},
		},
		credential,
		['13900053001', '135790'],
	);
	assert.equal(await runFromEditor(page, rest, url, workflow), 'success', 'the first send ends green');
	assert.equal(await runFromEditor(page, rest, url, workflow), 'success', 'the second run ends green');
	const hints = await billHint(page, 'SMS');
	await screenshot(page, 'sms-repeat-warning');
	await page.keyboard.press('Escape');
	assert.ok(hints.some((hint) => /^1 SMS not sent: an earlier execution sent the same message.*Repeat Window \(Minutes\) to 0\.$/.test(hint)), `the repeat warning: ${JSON.stringify(hints)}`);
}

const TOKEN = 'editor-check-token-2026';

/** A new SMS Trigger (1.2) with a token: the URL n8n shows carries it; the localhost notice is there. */
export async function checkTriggerUrl(page: Page, rest: N8nRest, url: string): Promise<ExampleWorkflow> {
	const workflow = (await rest.createWorkflow({
		name: 'Editor check: SMS trigger',
		nodes: [
			{
				id: 't1',
				name: 'SMS Events',
				type: TRIGGER,
				typeVersion: 1.2,
				position: [0, 0],
				webhookId: 'e7d1c0de-0000-4000-8000-000000002026',
				parameters: { events: ['sign'], security: { token: TOKEN } },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	})) as unknown as ExampleWorkflow;
	await page.goto(`${url}/workflow/${workflow.id}`);
	await openNode(page, 'SMS Events');
	const panel = page.locator('[data-test-id="ndv"]');
	await panel.getByText(/A localhost URL needs WEBHOOK_URL/).waitFor();
	const urls = panel.getByText(/Webhook URLs/).first();
	if (await urls.isVisible().catch(() => false)) await urls.click();
	await panel.getByText(new RegExp(`/data-gateway-sms/${TOKEN}`)).first().waitFor({ timeout: 10_000 });
	await screenshot(page, 'trigger-url-with-token');
	await page.keyboard.press('Escape');
	return workflow;
}

/** While the editor listens, a callback the settings filter out starts the test run with an item that says why. */
export async function checkRefusedWhileListening(page: Page, rest: N8nRest, url: string, workflow: ExampleWorkflow) {
	const before = new Set((await rest.executions()).map((execution) => execution.id));
	await page.goto(`${url}/workflow/${workflow.id}`);
	await page.locator('[data-test-id="execute-workflow-button"]').click();
	const testUrl = `${url}/webhook-test/e7d1c0de-0000-4000-8000-000000002026/data-gateway-sms/${TOKEN}`;
	const report = { action: 'report', sms: { id: `editor-${Date.now()}`, phone: '13900054001', content: '【数据网关】x', sendDate: '2026-11-22 09:00:00', receiveDate: '2026-11-22 09:00:01', status: 1, message: '' } };
	const deadline = Date.now() + 30_000;
	let answer: Response;
	for (;;) {
		answer = await fetch(testUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-event': 'sms' }, body: JSON.stringify(report) });
		if (answer.status !== 404 || Date.now() > deadline) break;
		await sleep(500);
	}
	assert.equal(answer.status, 200, 'the filtered callback gets 200');
	assert.match(await answer.text(), /"started":false/);
	const finished = await waitForExecution(rest, workflow.id, before);
	assert.equal(finished, 'success', 'the listening run shows the item');
	await page.waitForTimeout(1500);
	await openNode(page, 'SMS Events');
	const output = page.locator('[data-test-id="output-panel"]');
	try {
		await output.getByText('event not selected').first().waitFor();
		await output.getByText('notStarted').first().waitFor();
	} finally {
		await screenshot(page, 'trigger-filtered-while-listening');
		await page.keyboard.press('Escape');
	}
}

/** In `npm start`, a send made while the editor listens on the delivery-report example reaches its Test URL. */
export async function checkTestUrlGetsSends(page: Page, rest: N8nRest, url: string, credential: Credential) {
	// A number of its own: the examples' number may have had its one SMS of this minute already.
	const send = await smsWorkflow(
		rest,
		'Editor check: a send while the editor listens',
		{
			typeVersion: 1.1,
			parameters: { resource: 'message', operation: 'send', ...DEMO, phone: '={{ $json.phone }}', variablesInput: 'keyValue', variables: { variable: [{ name: 'code', value: '={{ $json.code }}' }] } },
		},
		credential,
		[`1390005${String(Date.now()).slice(-4)}`, '112233'],
	);
	const before = new Set((await rest.executions()).map((execution) => execution.id));
	await page.goto(`${url}/workflow/dgwExampleDeliveryReports`);
	await page.locator('[data-test-id="execute-workflow-button"]').click();
	// Let the editor register the Test URL before the send.
	await page.waitForTimeout(3000);
	const sent = await rest.finishedExecution(await rest.runWorkflow(send.id, 'Start'));
	assert.equal(sent.status, 'success', 'the send while listening ends green');
	const status = await waitForExecution(rest, 'dgwExampleDeliveryReports', before, (execution) => execution.mode === 'manual');
	await page.waitForTimeout(1500);
	await screenshot(page, 'trigger-test-url-heard-a-send');
	assert.equal(status, 'success', 'the listening delivery-report workflow ran from the send\'s callback');
}

async function waitForExecution(rest: N8nRest, workflowId: string, before: Set<string>, accept: (execution: ExecutionSummary) => boolean = () => true): Promise<string> {
	const deadline = Date.now() + 60_000;
	for (;;) {
		const done = (await rest.executions()).find(
			(execution) => execution.workflowId === workflowId && !before.has(execution.id) && ['success', 'error', 'crashed'].includes(execution.status) && accept(execution),
		);
		if (done) return done.status;
		if (Date.now() > deadline) throw new Error(`no finished execution of ${workflowId} within 60 s`);
		await sleep(500);
	}
}

/** Canvas subtitles read "operation: resource" in words; a node's Docs link opens its documentation section as given (no ?utm… after the #). */
export async function checkSubtitlesAndDocs(page: Page, url: string) {
	const expected: Array<[string, string, string, string]> = [
		['dgwExampleCompanies', 'Copyrights', 'get all: copyright', 'data-gateway-enterprise'],
		['dgwExamplePhones', 'Identify Numbers', 'identify: phone number', 'data-gateway-telephone'],
		['dgwExampleSend', 'Send Code', 'send: message', 'data-gateway-sms'],
		['dgwExampleDeliveryReports', 'Delivery Report', 'delivery report', 'data-gateway-sms-trigger'],
	];
	for (const [workflowId, node, subtitle, anchor] of expected) {
		await page.goto(`${url}/workflow/${workflowId}`);
		await page.getByText(subtitle, { exact: true }).first().waitFor();
		await screenshot(page, `subtitle-${workflowId}`);
		await openNode(page, node);
		const href = await page.locator('[data-test-id="ndv"] a', { hasText: 'Docs' }).first().getAttribute('href');
		await page.keyboard.press('Escape');
		assert.equal(href, readmeUrl(anchor), `the Docs link of "${node}"`);
	}
}
