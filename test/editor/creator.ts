/** The node creator and the credential dialog, as a new user meets them. */
import assert from 'node:assert/strict';

import type { Page } from 'playwright-core';

import { screenshot } from './shots';

/** What each node lists under "Actions" in the node creator (the trigger's events are listed with Data Gateway SMS). */
const ACTIONS: Record<string, string[]> = {
	'Data Gateway Vehicle': ['Query violations of a vehicle', 'Get violation support rules', 'Get vehicle detail'],
	'Data Gateway Enterprise': ['Get company registration details', 'Get many copyright registrations'],
	'Data Gateway Telephone': ['Identify a phone number'],
	// The message actions in the order people use them (the node's option order), then signatures and templates.
	'Data Gateway SMS': ['Send an SMS', 'Send an SMS and check delivery', 'Preview an SMS without sending', 'Get the status of a message', 'Check pending deliveries', 'Create a signature', 'Get a template'],
};

const itemNames = (page: Page) => page.locator('[data-test-id="node-creator-item-name"]');

async function search(page: Page, text: string) {
	const input = page.getByPlaceholder(/Search nodes/);
	if (!(await input.isVisible().catch(() => false))) await page.locator('[data-test-id="node-creator-plus-button"]').click();
	await input.fill(text);
	await page.waitForTimeout(800);
}

/**
 * In a workflow that has a trigger the creator offers actions ("What happens next?"). n8n shows a
 * package's trigger and action node of one app as one entry, so the five nodes are four entries:
 * Data Gateway SMS holds the SMS actions and the trigger's events.
 */
export async function checkNodeCreator(page: Page, url: string, workflowId: string) {
	await page.goto(`${url}/workflow/${workflowId}`);
	await search(page, 'Data Gateway');
	const names = await itemNames(page).allInnerTexts();
	assert.deepEqual([...names].sort(), Object.keys(ACTIONS).sort(), `search "Data Gateway" lists ${JSON.stringify(names)}`);
	await screenshot(page, 'creator-search');
	for (const [name, actions] of Object.entries(ACTIONS)) {
		// A fresh page for each: Escape in the details panel does not always close the creator.
		await page.goto(`${url}/workflow/${workflowId}`);
		await search(page, 'Data Gateway');
		await itemNames(page).filter({ hasText: new RegExp(`^${name}$`) }).click();
		const panel = page.locator('[data-test-id="node-creator"]');
		await panel.getByText(actions[0], { exact: true }).waitFor();
		const text = await panel.innerText();
		for (const action of actions) assert.ok(text.includes(action), `${name} lists "${action}":\n${text}`);
		const positions = actions.map((action) => text.indexOf(action));
		assert.deepEqual([...positions].sort((a, b) => a - b), positions, `${name} lists its actions in this order: ${actions.join(', ')}\n${text}`);
		if (name === 'Data Gateway SMS') assert.match(text, /Triggers \(3\)/, 'the SMS entry lists the trigger events');
		await screenshot(page, `creator-${name.split(' ').pop()?.toLowerCase()}`);
	}
	await page.goto(`${url}/workflow/${workflowId}`);
	for (const words of ['sms', '短信', 'text message', 'phone', 'verification code']) {
		await search(page, words);
		assert.ok((await itemNames(page).allInnerTexts()).includes('Data Gateway SMS'), `search "${words}" finds Data Gateway SMS`);
		if (words === 'sms') {
			const entry = page.locator('[data-test-id="node-creator-item-name"]', { hasText: /^Data Gateway SMS$/ }).locator('xpath=ancestor::*[.//*[@data-test-id="node-creator-item-description"]][1]');
			const description = await entry.locator('[data-test-id="node-creator-item-description"]').first().innerText().catch(() => '');
			await screenshot(page, 'creator-search-sms');
			assert.match(description, /^Send SMS/, `the SMS entry speaks of sending first: "${description}"`);
		}
	}
	await page.keyboard.press('Escape');
}

/** The stored credential tests green when opened; a new one with a wrong App Code says why it failed, without the code. */
export async function checkCredential(page: Page, url: string, credentialName: string, emulatorUrl: string) {
	await page.goto(`${url}/home/credentials`);
	await page.getByText(credentialName, { exact: true }).first().click();
	const modal = page.locator('[data-test-id="editCredential-modal"]');
	await modal.getByText('Connection tested successfully').waitFor();
	await screenshot(page, 'credential-ok');
	await page.keyboard.press('Escape');

	const wrongCode = 'wrong-app-code-4711';
	await page.getByRole('button', { name: 'Create credential' }).click();
	await page.locator('[data-test-id="new-credential-type-select"] input').fill('Data Gateway API');
	await page.locator('[data-test-id="new-credential-type-select-option"]', { hasText: 'Data Gateway API' }).first().click();
	await page.locator('[data-test-id="new-credential-type-button"]').click();
	const fields = modal.locator('[data-test-id="credential-connection-parameter"]');
	// By label: the section headings (notices) come before the fields.
	await fields.filter({ hasText: /^\s*App Code/ }).first().locator('input').fill(wrongCode);
	await fields.filter({ hasText: /^\s*Base URL/ }).first().locator('input').fill(emulatorUrl);
	await page.locator('[data-test-id="credential-save-button"]').click();
	await modal.getByText(/Couldn.t connect with these settings/).waitFor();
	await modal.getByText('More details').click();
	await modal.getByText(/The gateway refused the appCode/).waitFor();
	const text = await modal.innerText();
	assert.ok(!text.includes(wrongCode.slice(0, 8)), 'the wrong App Code is not shown back');
	await screenshot(page, 'credential-wrong-code');
	await page.keyboard.press('Escape');
}
