/**
 * `npm run test:e2e`: the packed package inside real n8n 2.x and 1.123.x, installed the way
 * Community Nodes installs it. Runs the example workflows with `n8n execute`, lets the emulator's
 * callbacks start the active trigger workflows (each callback starts exactly one execution), and
 * checks through the REST API that the credential test passes and every execution is green.
 * E2E_LINES=2 (or 1) runs one line only; E2E_ONLY=aiAgent (names of the checks below, comma-separated)
 * runs only those after the install.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureRuntime, n8nCommand, N8nRest, NODE_TYPE_PREFIX, packPackage, setupOwner, startN8n, type N8nLine, type Runtime } from '../../scripts/n8n-runtime';
import { credentialNameFor, CREDENTIAL_ID, prepareSandbox, webhookPathOf } from '../../scripts/sandbox';
import { startEmulator, type Emulator } from '../emulator/server';
import { checkAcrossExecutions } from './acrossExecutions';
import { checkAiAgent } from './aiAgent';
import { checkErrorOutput } from './errorOutput';
import { checkMoneySafety, type MoneySafetyOptions } from './moneySafety';
import { checkLeaving } from './leaving';
import { checkOptOut } from './optOut';
import { parsePrintedRun } from './printedRun';
import { checkSameHostRace } from './sameHostRace';
import { checkSharedBudget } from './sharedBudget';
import { checkUsage } from './usage';

/** The checks after the examples, in order; E2E_ONLY names some of them. */
const CHECKS: Record<string, (options: MoneySafetyOptions, line: N8nLine) => Promise<void>> = {
	// Loops, execution retries, restarts and the spending cap, judged by the ledger.
	moneySafety: checkMoneySafety,
	// Failed items of a lookup and of SMS Send leave on the Error branch, the others on Success.
	errorOutput: checkErrorOutput,
	// Reuse, only new and the telephone quota between executions, each its own n8n process.
	acrossExecutions: checkAcrossExecutions,
	// The opt-out list: added in one process, honoured by another workflow's Send in another.
	optOut: checkOptOut,
	// SMS 1.5: an opted-out number skipped, the others sent; opted out mid-batch, or past the Send Window's end mid-batch: not sent.
	leaving: checkLeaving,
	// Two n8n processes, one user folder, no Redis: the SQLite store lets each message out once.
	sameHostRace: checkSameHostRace,
	// Two n8n processes at once on one credential with a daily budget: the bill stays within it.
	sharedBudget: checkSharedBudget,
	// The SMS and Telephone nodes as tools of n8n's AI Agent: each message once, the model shown no appCode.
	aiAgent: checkAiAgent,
	// Usage → Get after sends, a repeat, a lookup and its reuse, matched to the ledger; the daily usage report example.
	usage: checkUsage,
};

const NODE_NAMES = ['dataGatewayVehicle', 'dataGatewayEnterprise', 'dataGatewayTelephone', 'dataGatewaySms', 'dataGatewaySmsTrigger'];

/** `n8n execute --rawOutput` prints the run's result as JSON after its log lines. */


async function executeExample(runtime: Runtime, workflowId: string, environment: { userFolder: string }) {
	const result = await n8nCommand(runtime, ['execute', `--id=${workflowId}`, '--rawOutput'], environment);
	assert.equal(result.code, 0, `n8n execute ${workflowId} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`);
	const output = parsePrintedRun(result.stdout) as { status?: string };
	assert.equal(output.status, 'success', `${workflowId} ended ${output.status}`);
	return { output, text: result.stdout };
}

async function until(condition: () => boolean, timeoutMs: number, what: string) {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((done) => setTimeout(done, 200));
	}
}

async function checkLine(line: N8nLine, tarball: string) {
	const started = Date.now();
	const log = (text: string) => console.log(`[n8n ${line}.x] ${text}`);
	const runtime = await ensureRuntime(line, log);
	const userFolder = mkdtempSync(join(tmpdir(), `dgw-e2e-${line}-`));
	const environment = { userFolder };
	let emulator: Emulator | undefined;
	try {
		emulator = await startEmulator({ reviewDelayMs: 500, deliveryDelayMs: 500, deliveryFailureShare: 0 });
		const { examples } = await prepareSandbox(runtime, {
			...environment,
			tarball,
			gatewayUrl: emulator.url,
			appCode: emulator.demo.appCode,
			credentialName: credentialNameFor(emulator.url, true),
			notificationUrl: `${emulator.url}/__emulator/notifications`,
		});
		log('package installed as a community package, examples imported');
		const checkOptions = { runtime, environment, emulator, typePrefix: NODE_TYPE_PREFIX, credentialId: CREDENTIAL_ID, log };
		const only = process.env.E2E_ONLY?.split(',').map((name) => name.trim());
		if (only) {
			for (const name of only) {
				const check = CHECKS[name];
				if (!check) throw new Error(`E2E_ONLY: no check ${name}; choose from ${Object.keys(CHECKS).join(', ')}`);
				await check(checkOptions, line);
			}
			return;
		}

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
		assert.match(companies.text, /registrationNumber/, 'copyright records in the output (version 1.1 names)');
		assert.match(companies.text, /pageCostYuan/, 'every copyright record says what its page cost');
		log('company report ran');

		// The opt-out example (its manual path): the sample number is added to the list, free, and confirmed.
		emulator.resetLedger();
		const optOut = await executeExample(runtime, examples['opt-out'].id, environment);
		assert.match(optOut.text, /13912340000 will get no more messages from us/, 'opt-out example confirms the number');
		assert.equal(emulator.ledger().calls.length, 0, 'opt-out example: no gateway call');
		log('opt-out example: number added and confirmed, no gateway call');

		for (const check of Object.values(CHECKS)) await check(checkOptions, line);

		// 3. Real n8n with the triggers active: every callback starts exactly one execution.
		const n8n = await startN8n(runtime, environment);
		try {
			// Lines about the package, not stack frames that merely pass through a folder named after it.
			const ownLines = n8n
				.log()
				.split('\n')
				.filter((text) => !/^\s+at /.test(text) && /data-?gateway/i.test(text) && /(error|warn|fail)/i.test(text));
			assert.deepEqual(ownLines, [], `n8n logged problems with the package:\n${ownLines.join('\n')}`);
			const cookie = await setupOwner(n8n.url, { email: 'e2e@example.com', password: 'E2e-Password-1', firstName: 'E2E', lastName: 'Check' });
			const rest = new N8nRest(n8n.url, cookie);
			const types = await rest.nodeTypeNames();
			for (const name of NODE_NAMES) assert.ok(types.includes(`${NODE_TYPE_PREFIX}${name}`), `n8n lists ${NODE_TYPE_PREFIX}${name}`);
			log('editor lists all five nodes under the package name');
			const credentialTest = await rest.testCredential(CREDENTIAL_ID);
			assert.equal(credentialTest.status, 'OK', `credential test: ${JSON.stringify(credentialTest)}`);
			log(`credential test: ${credentialTest.message}`);

			const webhookUrls = Object.values(examples)
				.map(webhookPathOf)
				.filter((path): path is string => path !== undefined)
				.map((path) => `${n8n.url}/${path}`);
			emulator.configure({ callbackUrl: webhookUrls.join(',') });
			// The checks before (the usage report example) may have notified too: only what comes from here counts.
			const since = emulator.notifications().length;

			// The send example, executed while n8n runs, produces one delivery report.
			emulator.resetLedger();
			await executeExample(runtime, examples['sms-send'].id, environment);
			assert.equal(emulator.ledger().byPath['/sms/send']?.calls, 1, 'one send');
			const outcomesOf = () => emulator!.notifications().slice(since).map((note) => (note.body as { outcome?: string }).outcome);
			await until(() => outcomesOf().includes('delivered'), 30_000, 'the delivered report');

			// A failed delivery, a signature review and a template review, straight at the emulator.
			emulator.configure({ deliveryFailureShare: 1 });
			const gateway = async (path: string, params: Record<string, string>) =>
				await (await fetch(`${emulator!.url}${path}?${new URLSearchParams({ ...params, appCode: emulator!.demo.appCode })}`)).json();
			await gateway('/sms/send', { signId: emulator.demo.signatureId, templateId: emulator.demo.templateWithoutVariablesId, phone: '13900008888' });
			await gateway('/sms/add_sign', { name: '端到端签名', remark: 'e2e' });
			await gateway('/sms/add_template', { name: 'e2e', content: '您好${name}', remark: 'e2e' });
			await until(() => outcomesOf().length >= 4, 30_000, 'four notifications');
			await new Promise((done) => setTimeout(done, 3000)); // room for any duplicate start to show up

			assert.deepEqual(outcomesOf().sort(), ['delivered', 'failed', 'review', 'review'], `one execution per callback, got ${JSON.stringify(emulator.notifications().slice(since))}`);
			// Each callback went to both trigger workflows: one started, the other filtered it out with 200.
			const callbacks = emulator.callbacks();
			assert.equal(callbacks.length, 8, `8 deliveries of 4 callbacks, got ${JSON.stringify(callbacks)}`);
			assert.ok(callbacks.every((callback) => callback.status === 200), `all callbacks answered 200: ${JSON.stringify(callbacks)}`);
			log('4 callbacks started exactly 4 executions');
			const executions = await rest.executions();
			for (const example of [examples['delivery-reports'], examples['review-notifications']]) {
				const runs = executions.filter((execution) => execution.workflowId === example.id);
				assert.deepEqual(runs.map((execution) => execution.status), ['success', 'success'], `"${example.name}": two green executions`);
			}
			// The money-safety checks fail executions on purpose; every example's execution is green.
			const exampleIds = new Set(Object.values(examples).map((example) => example.id));
			const exampleRuns = executions.filter((execution) => exampleIds.has(execution.workflowId));
			assert.deepEqual(exampleRuns.filter((execution) => execution.status !== 'success'), [], 'every stored execution of an example is green');
			log(`all ${exampleRuns.length} stored executions of the examples green`);
		} finally {
			await n8n.stop();
		}
		log(`passed in ${Math.round((Date.now() - started) / 1000)} s`);
	} finally {
		await emulator?.close();
		rmSync(userFolder, { recursive: true, force: true });
	}
}

async function main() {
	const lines = (process.env.E2E_LINES ?? '2,1').split(',').map((line) => line.trim()) as N8nLine[];
	// Built by the caller (npm run build), packed once for both lines.
	const packDir = mkdtempSync(join(tmpdir(), 'dgw-e2e-pack-'));
	try {
		const tarball = packPackage(packDir);
		for (const line of lines) await checkLine(line, tarball);
	} finally {
		rmSync(packDir, { recursive: true, force: true });
	}
	console.log(`end-to-end: n8n ${lines.map((line) => `${line}.x`).join(' and ')} passed`);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
