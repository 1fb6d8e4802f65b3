/** Running workflows from the editor and reading what the node panel shows after a run. */
import assert from 'node:assert/strict';

import type { Page } from 'playwright-core';

import type { N8nRest } from '../../scripts/n8n-runtime';
import type { ExampleWorkflow } from '../../scripts/sandbox';
import { sleep } from '../sandbox/npmStart';
import { itemsNode, manualStart } from '../e2e/moneySafety';

const FINISHED = new Set(['success', 'error', 'crashed', 'canceled']);

/** Opens a node's panel: a double-click on its box, which sits about 50 px above its label. */
export async function openNode(page: Page, label: string) {
	const box = await page.getByText(label, { exact: true }).first().boundingBox();
	assert.ok(box, `node "${label}" is on the canvas`);
	await page.mouse.dblclick(box.x + box.width / 2, box.y - 50);
	await page.locator('[data-test-id="ndv"]').waitFor();
}

async function executionIds(rest: N8nRest, workflowId: string): Promise<Set<string>> {
	return new Set((await rest.executions()).filter((execution) => execution.workflowId === workflowId).map((execution) => execution.id));
}

/**
 * Opens the workflow and clicks "Execute workflow", as a user does. A trigger workflow then
 * listens on its Test URL: `callback` posts there (as the gateway would) until it is heard.
 * Returns the status of the execution that click started.
 */
export async function runFromEditor(page: Page, rest: N8nRest, url: string, workflow: ExampleWorkflow, callback?: () => Promise<{ status: number; body: string }>): Promise<string> {
	const before = await executionIds(rest, workflow.id);
	await page.goto(`${url}/workflow/${workflow.id}`);
	await page.locator('[data-test-id="execute-workflow-button"]').click();
	if (callback) {
		// Until the editor listens, n8n answers 404 on the Test URL.
		const deadline = Date.now() + 30_000;
		let answer = await callback();
		while (answer.status === 404) {
			if (Date.now() > deadline) throw new Error('the Test URL never started listening');
			await sleep(500);
			answer = await callback();
		}
		assert.equal(answer.status, 200, `the Test URL answered ${answer.status}: ${answer.body}`);
		assert.doesNotMatch(answer.body, /"started":\s*false/, `the trigger started nothing: ${answer.body}`);
	}
	const deadline = Date.now() + 90_000;
	for (;;) {
		const fresh = (await rest.executions()).filter((execution) => execution.workflowId === workflow.id && !before.has(execution.id));
		const done = fresh.find((execution) => FINISHED.has(execution.status));
		if (done) {
			// Let the canvas take in the finished run before a screenshot or a node panel.
			await page.waitForTimeout(1500);
			return done.status;
		}
		if (Date.now() > deadline) throw new Error(`no finished execution of "${workflow.name}" after 90 s: ${JSON.stringify(fresh)}`);
		await sleep(500);
	}
}

/** The execution hints above a node's output after the run just made in the editor. */
export async function billHint(page: Page, nodeLabel: string): Promise<string[]> {
	await openNode(page, nodeLabel);
	const hints = page.locator('[data-test-id="output-panel"] [data-test-id="node-hint"]');
	await hints.first().waitFor();
	return (await hints.allInnerTexts()).map((text) => text.trim());
}

/**
 * A Telephone node under "Continue (using error output)" with one good and one bad number. From
 * version 1.3 the failed item keeps its input: the Error branch's table has the `phone` column.
 */
export async function checkErrorBranch(page: Page, rest: N8nRest, url: string, credential: { id: string; name: string }, typeVersion = 1.1) {
	const workflow = await rest.createWorkflow({
		name: `Editor check: error output (${typeVersion})`,
		nodes: [
			manualStart,
			itemsNode('Numbers', [{ phone: '13800138000' }, { phone: 'call me' }]),
			{
				id: 'e3',
				name: 'Identify',
				type: 'n8n-nodes-data-gateway.dataGatewayTelephone',
				typeVersion,
				position: [440, 0],
				onError: 'continueErrorOutput',
				parameters: { phoneNumber: '={{ $json.phone }}' },
				credentials: { dataGatewayApi: credential },
			},
		],
		connections: { Start: { main: [[{ node: 'Numbers', type: 'main', index: 0 }]] }, Numbers: { main: [[{ node: 'Identify', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	});
	const status = await runFromEditor(page, rest, url, { ...workflow, nodes: [] } as ExampleWorkflow);
	assert.equal(status, 'success', 'the run with the error output ends green');
	await openNode(page, 'Identify');
	const success = page.locator('[data-test-id="output-panel"] [data-test-id="tab-0"]');
	const error = page.locator('[data-test-id="output-panel"] [data-test-id="tab-1"]');
	await error.waitFor();
	await error.click();
	const [successText, errorText] = [await success.innerText(), await error.innerText()];
	assert.match(errorText, /Error Branch \(1 item\)/, `the failed item is on the Error branch (tabs: "${successText}", "${errorText}")`);
	assert.match(successText, /Success Branch \(1 item\)/, `the good item stays on the Success branch (tabs: "${successText}", "${errorText}")`);
	const output = await page.locator('[data-test-id="output-panel"]').innerText();
	assert.match(output, /Phone Number "call me"/, 'the error item names the item and the field');
	const columns = (await page.locator('[data-test-id="output-panel"] table th').allInnerTexts()).map((text) => text.trim());
	if (typeVersion >= 1.3) {
		assert.ok(['phone', 'error', 'message'].every((name) => columns.includes(name)), `the Error branch keeps the input beside the error: columns ${JSON.stringify(columns)}`);
	} else {
		assert.deepEqual(columns.filter((name) => name === 'phone'), [], `saved versions keep n8n's { error } item: columns ${JSON.stringify(columns)}`);
	}
}
