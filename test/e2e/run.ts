/**
 * `npm run test:e2e`: the built package inside real n8n 2.x and 1.123.x (headless).
 * Loads it, runs the example workflows with `n8n execute`, and lets the emulator's callbacks
 * start the active trigger workflows, checking that each callback starts exactly one execution.
 * E2E_LINES=2 (or 1) runs one line only.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureRuntime, n8nCommand, REPO_ROOT, setupOwner, startN8n, type N8nLine, type Runtime } from '../../scripts/n8n-runtime';
import { CREDENTIAL_ID, CUSTOM_PREFIX, prepareSandbox, webhookPathOf } from '../../scripts/sandbox';
import { startEmulator, type Emulator } from '../emulator/server';
import { checkMoneySafety } from './moneySafety';

const NODE_NAMES = ['dataGatewayVehicle', 'dataGatewayEnterprise', 'dataGatewayTelephone', 'dataGatewaySms', 'dataGatewaySmsTrigger'];

type Notification = { outcome: string; [key: string]: unknown };

async function notificationReceiver() {
	const received: Notification[] = [];
	const server = createServer((request, response) => {
		let text = '';
		request.on('data', (chunk) => (text += chunk));
		request.on('end', () => {
			received.push(JSON.parse(text || '{}'));
			response.end('{}');
		});
	});
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, received, close: () => new Promise((done) => server.close(done)) };
}

/** `n8n execute --rawOutput` prints the run's result as JSON after its log lines. */
function parseExecuteOutput(stdout: string): unknown {
	const start = stdout.search(/^[[{]\s*$/m);
	assert.ok(start >= 0, `no JSON in n8n execute output:\n${stdout.slice(-2000)}`);
	return JSON.parse(stdout.slice(start));
}

async function executeExample(runtime: Runtime, workflowId: string, environment: { userFolder: string; customExtensions: string[] }) {
	const result = await n8nCommand(runtime, ['execute', `--id=${workflowId}`, '--rawOutput'], environment);
	assert.equal(result.code, 0, `n8n execute ${workflowId} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`);
	return { output: parseExecuteOutput(result.stdout), text: result.stdout };
}

async function until(condition: () => boolean, timeoutMs: number, what: string) {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((done) => setTimeout(done, 200));
	}
}

async function checkLine(line: N8nLine) {
	const started = Date.now();
	const log = (text: string) => console.log(`[n8n ${line}.x] ${text}`);
	const runtime = await ensureRuntime(line, log);
	const userFolder = mkdtempSync(join(tmpdir(), `dgw-e2e-${line}-`));
	const environment = { userFolder, customExtensions: [join(REPO_ROOT, 'dist')] };
	let emulator: Emulator | undefined;
	const receiver = await notificationReceiver();
	try {
		emulator = await startEmulator({ reviewDelayMs: 500, deliveryDelayMs: 500, deliveryFailureShare: 0 });
		const examples = await prepareSandbox(runtime, { ...environment, gatewayUrl: emulator.url, appCode: emulator.demo.appCode, notifyUrl: receiver.url });
		log('package loaded, examples imported');

		// 1. The batch phone lookup: 8 numbers with repeats, one paid question per distinct number.
		emulator.resetLedger();
		const phones = await executeExample(runtime, examples['phone-batch'].id, environment);
		assert.equal(emulator.ledger().byPath['/telecom/identify']?.calls, 5, 'phone batch: 5 distinct numbers, 5 calls');
		assert.match(phones.text, /isFlagged/, 'phone batch output carries the simplified flag');
		log('phone batch: 8 items, 5 calls');

		// 2. Companies: registration and copyrights.
		emulator.resetLedger();
		const companies = await executeExample(runtime, examples['company-report'].id, environment);
		assert.equal(emulator.ledger().byPath['/enterprise/detail_info']?.billedCalls, 3, 'three registrations');
		assert.ok((emulator.ledger().byPath['/enterprise/copyright']?.calls ?? 0) >= 3, 'copyrights asked for each company');
		assert.match(companies.text, /RegisterNo/, 'copyright records in the output');
		log('company report ran');

		// Loops, execution retries, restarts and the spending cap, judged by the ledger.
		await checkMoneySafety({ runtime, environment, emulator, typePrefix: CUSTOM_PREFIX, credentialId: CREDENTIAL_ID, log });

		// 3. Real n8n with the triggers active: every callback starts exactly one execution.
		const n8n = await startN8n(runtime, environment);
		try {
			const ownLines = n8n.log().split('\n').filter((text) => /data-?gateway/i.test(text) && /(error|warn|fail)/i.test(text));
			assert.deepEqual(ownLines, [], `n8n logged problems with the package:\n${ownLines.join('\n')}`);
			const cookie = await setupOwner(n8n.url, { email: 'e2e@example.com', password: 'E2e-Password-1', firstName: 'E2E', lastName: 'Check' });
			const types = (await (await fetch(`${n8n.url}/types/nodes.json`, { headers: { cookie } })).json()) as Array<{ name: string }>;
			for (const name of NODE_NAMES) assert.ok(types.some((type) => type.name === `CUSTOM.${name}`), `n8n lists ${name}`);
			log('editor lists all five nodes');

			const webhookUrls = Object.values(examples)
				.map(webhookPathOf)
				.filter((path): path is string => path !== undefined)
				.map((path) => `${n8n.url}/${path}`);
			emulator.configure({ callbackUrl: webhookUrls.join(',') });

			// The send example, executed while n8n runs, produces one delivery report.
			emulator.resetLedger();
			await executeExample(runtime, examples['sms-send'].id, environment);
			assert.equal(emulator.ledger().byPath['/sms/send']?.calls, 1, 'one send');
			await until(() => receiver.received.some((note) => note.outcome === 'delivered'), 30_000, 'the delivered report');

			// A failed delivery, a signature review and a template review, straight at the emulator.
			emulator.configure({ deliveryFailureShare: 1 });
			const gateway = async (path: string, params: Record<string, string>) =>
				await (await fetch(`${emulator!.url}${path}?${new URLSearchParams({ ...params, appCode: emulator!.demo.appCode })}`)).json();
			await gateway('/sms/send', { signId: emulator.demo.signatureId, templateId: emulator.demo.templateWithoutVariablesId, phone: '13900008888' });
			await gateway('/sms/add_sign', { name: '端到端签名', remark: 'e2e' });
			await gateway('/sms/add_template', { name: 'e2e', content: '您好${name}', remark: 'e2e' });
			await until(() => receiver.received.length >= 4, 30_000, 'four notifications');
			await new Promise((done) => setTimeout(done, 3000)); // room for any duplicate start to show up

			const outcomes = receiver.received.map((note) => note.outcome).sort();
			assert.deepEqual(outcomes, ['delivered', 'failed', 'review', 'review'], `one execution per callback, got ${JSON.stringify(receiver.received)}`);
			// Each callback went to both trigger workflows: one started, the other filtered it out with 200.
			const callbacks = emulator.callbacks();
			assert.equal(callbacks.length, 8, `8 deliveries of 4 callbacks, got ${JSON.stringify(callbacks)}`);
			assert.ok(callbacks.every((callback) => callback.status === 200), `all callbacks answered 200: ${JSON.stringify(callbacks)}`);
			log('4 callbacks started exactly 4 executions');
		} finally {
			await n8n.stop();
		}
		log(`passed in ${Math.round((Date.now() - started) / 1000)} s`);
	} finally {
		await emulator?.close();
		await receiver.close();
		rmSync(userFolder, { recursive: true, force: true });
	}
}

async function main() {
	const lines = (process.env.E2E_LINES ?? '2,1').split(',').map((line) => line.trim()) as N8nLine[];
	for (const line of lines) await checkLine(line);
	console.log(`end-to-end: n8n ${lines.map((line) => `${line}.x`).join(' and ')} passed`);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
