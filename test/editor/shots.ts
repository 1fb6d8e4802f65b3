import { join } from 'node:path';

import type { Page } from 'playwright-core';

import { REPO_ROOT } from '../../scripts/n8n-runtime';

/** Where each step's screenshot goes; CI keeps this folder. */
export const SCREENSHOTS = process.env.EDITOR_SCREENSHOTS || join(REPO_ROOT, 'test-results', 'editor');

let shot = 0;
/** Saves the page as NN-name.png; the numbers keep the steps in order. */
export async function screenshot(page: Page, name: string) {
	shot++;
	await page.screenshot({ path: join(SCREENSHOTS, `${String(shot).padStart(2, '0')}-${name}.png`) });
}
