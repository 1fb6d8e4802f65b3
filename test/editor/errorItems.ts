/** Issue 26's last editor items: the error that stops a node names its item once, counted from 1, as the node panel shows it. */
import assert from 'node:assert/strict';

import type { Page } from 'playwright-core';

import type { N8nRest } from '../../scripts/n8n-runtime';
import type { ExampleWorkflow } from '../../scripts/sandbox';
import type { Credential } from './secondPass';
import { screenshot } from './shots';
import { openNode, runFromEditor } from './workflows';
import { itemsNode, manualStart } from '../e2e/moneySafety';

/**
 * Two recipients, an SMS node (1.3) with both IDs left at 0. n8n's editor appends " [item N]"
 * (0-based) to an error with an itemIndex when the node had several input items; the header must
 * read our message alone, which names item 1 and both fields.
 */
export async function checkItemNamedOnce(page: Page, rest: N8nRest, url: string, credential: Credential) {
	const workflow = (await rest.createWorkflow({
		name: 'Editor check: both IDs 0',
		nodes: [
			manualStart,
			itemsNode('Recipients', [{ phone: '13900056001' }, { phone: '13900056002' }]),
			{
				id: 'i3',
				name: 'SMS',
				type: 'n8n-nodes-data-gateway.dataGatewaySms',
				typeVersion: 1.3,
				position: [440, 0],
				parameters: { resource: 'message', operation: 'send', signId: 0, templateId: 0, phone: '={{ $json.phone }}', variablesInput: 'keyValue', variables: { variable: [{ name: 'code', value: '1234' }] } },
				credentials: { dataGatewayApi: credential },
			},
		],
		connections: { Start: { main: [[{ node: 'Recipients', type: 'main', index: 0 }]] }, Recipients: { main: [[{ node: 'SMS', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	})) as unknown as ExampleWorkflow;
	assert.equal(await runFromEditor(page, rest, url, workflow), 'error', 'the run stops at the SMS node');
	await openNode(page, 'SMS');
	const header = page.locator('[data-test-id="ndv"] [data-test-id="node-error-message"]').first();
	await header.waitFor();
	const text = (await header.innerText()).trim();
	await screenshot(page, 'error-item-named-once');
	await page.keyboard.press('Escape');
	assert.equal(text, 'Item 1: Signature ID and Template ID are both empty or 0', `the error header names item 1 once and both fields: "${text}"`);
}
