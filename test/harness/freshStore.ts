/**
 * Each test starts with a fresh durable store, as a fresh n8n would: a new SQLite file (the store
 * n8n 2.x gives a node without Redis; DATA_GATEWAY_STORE_FILE points at it) and empty process
 * memory. Tests that run on Redis name it in the credential.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetOpenStores } from '../../nodes/shared/testing';


const folder = mkdtempSync(join(tmpdir(), 'dgw-harness-store-'));
let files = 0;

if (typeof beforeEach === 'function') {
	beforeEach(() => {
		forgetOpenStores();
		process.env.DATA_GATEWAY_STORE_FILE = join(folder, `store-${++files}.sqlite`);
	});
	afterAll(() => {
		forgetOpenStores();
		rmSync(folder, { recursive: true, force: true });
	});
}
