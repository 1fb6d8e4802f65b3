/**
 * `npm run test:sandbox`: what a new user does, checked through n8n's REST API. Runs `npm start`
 * on free ports with a throwaway sandbox folder, then: the five nodes are listed under the package
 * name, the credential's Test succeeds, every example runs green (the trigger examples from the
 * emulator's callbacks, their notifications arriving at the emulator), Ctrl-C stops quietly with
 * exit 0; after a restart a workflow made before it is still there, the examples are not
 * duplicated and the owner still logs in; a busy port names its variable; `--reset` starts over.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';

import { loginOwner, N8nRest, NODE_TYPE_PREFIX } from '../../scripts/n8n-runtime';
import { CREDENTIAL_ID, loadExamples, manualTriggerOf, SANDBOX_OWNER, webhookPathOf } from '../../scripts/sandbox';
import { newSandbox, npmStart, pressCtrlC, sleep, stopAll, waitReady, type NpmStart } from './npmStart';

const NODE_NAMES = ['dataGatewayVehicle', 'dataGatewayEnterprise', 'dataGatewayTelephone', 'dataGatewaySms', 'dataGatewaySmsTrigger'];
/** A stack frame line, as a raw error dump prints it. */
const STACK_FRAME = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

const log = (text: string) => console.log(`[sandbox] ${text}`);

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await read();
		if (ok(value)) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(value).slice(0, 2000)}`);
		await sleep(250);
	}
}

async function stopQuietly(start: NpmStart, label: string) {
	const { code, after } = await pressCtrlC(start);
	assert.equal(code, 0, `${label}: Ctrl-C exits 0, got ${code}:\n${after}`);
	assert.doesNotMatch(after, STACK_FRAME, `${label}: no stack trace on Ctrl-C:\n${after}`);
	assert.doesNotMatch(after, /error/i, `${label}: no error on Ctrl-C:\n${after}`);
}

async function session(n8nPort: number): Promise<N8nRest> {
	const url = `http://127.0.0.1:${n8nPort}`;
	return new N8nRest(url, await loginOwner(url, SANDBOX_OWNER));
}

async function main() {
	const started = Date.now();
	const { env, sandboxDir, n8nPort, emulatorPort } = await newSandbox('dgw-sandbox-test-');
	const emulatorUrl = `http://127.0.0.1:${emulatorPort}`;
	const examples = Object.values(loadExamples());
	const running: NpmStart[] = [];
	try {
		// 1. First start: a new sandbox.
		const first = npmStart(env);
		running.push(first);
		await waitReady(first);
		log(`first start ready in ${Math.round((Date.now() - started) / 1000)} s; it printed:\n${first.output().replace(/^npm warn .*\n/gm, '')}`);
		let rest = await session(n8nPort);

		const types = await rest.nodeTypeNames();
		for (const name of NODE_NAMES) assert.ok(types.includes(`${NODE_TYPE_PREFIX}${name}`), `n8n lists ${NODE_TYPE_PREFIX}${name}`);
		log('n8n lists the five nodes under the package name');

		const test = await rest.testCredential(CREDENTIAL_ID);
		assert.equal(test.status, 'OK', `credential test: ${JSON.stringify(test)}`);
		log(`credential Test: ${test.message}`);

		// 2. Every example green: manual ones run from their manual trigger, trigger ones from the emulator's callbacks.
		for (const example of examples) {
			const trigger = manualTriggerOf(example);
			if (!trigger) continue;
			const execution = await rest.finishedExecution(await rest.runWorkflow(example.id, trigger));
			assert.equal(execution.status, 'success', `"${example.name}" ended ${execution.status}`);
			log(`"${example.name}": ${execution.status}`);
		}
		await fetch(`${emulatorUrl}/sms/add_sign?${new URLSearchParams({ name: '沙盒签名', remark: 'sandbox check', appCode: 'demo-app-code' })}`);
		// Every SMS the examples sent comes back as one delivery report, and the signature as one review.
		const ledger = (await (await fetch(`${emulatorUrl}/__emulator/ledger`)).json()) as { calls: Array<{ path: string; kind: string; code: number | null }> };
		const sends = ledger.calls.filter((entry) => entry.path === '/sms/send' && entry.kind === 'call' && entry.code === 0).length;
		assert.ok(sends >= 1, 'the examples sent at least one SMS');
		const expectedRuns: Record<string, number> = { dgwExampleDeliveryReports: sends, dgwExampleReviews: 1 };
		const triggerExamples = examples.filter((example) => webhookPathOf(example) !== undefined);
		assert.deepEqual(triggerExamples.map((example) => example.id).sort(), Object.keys(expectedRuns).sort(), 'the two trigger examples');
		const finished = (execution: { status: string }) => execution.status !== 'running' && execution.status !== 'new';
		const executions = await until(
			() => rest.executions(),
			(list) => triggerExamples.every((example) => list.filter((execution) => execution.workflowId === example.id && finished(execution)).length >= expectedRuns[example.id]),
			60_000,
			'the delivery-report and review executions',
		);
		for (const example of triggerExamples) {
			const mine = executions.filter((execution) => execution.workflowId === example.id);
			assert.equal(mine.length, expectedRuns[example.id], `one execution of "${example.name}" per callback, got ${JSON.stringify(mine)}`);
			assert.ok(mine.every((execution) => execution.status === 'success'), `"${example.name}" all green: ${JSON.stringify(mine)}`);
			log(`"${example.name}" (from ${mine.length} callback${mine.length === 1 ? '' : 's'}): success`);
		}
		const allExecutions = await rest.executions();
		assert.ok(allExecutions.every((execution) => execution.status === 'success'), `every execution green: ${JSON.stringify(allExecutions)}`);
		const allNotes = (await (await fetch(`${emulatorUrl}/__emulator/notifications`)).json()) as Array<{ body: { outcome?: string; plate?: string } }>;
		// The fleet check notifies new violations and the usage report its summary; here only the reports and reviews are counted.
		const notes = allNotes.filter((note) => note.body.outcome !== 'new violations' && note.body.outcome !== 'usage report');
		assert.ok(allNotes.some((note) => note.body.outcome === 'new violations' && note.body.plate), 'the fleet check reported new violations');
		assert.ok(
			allNotes.some((note) => note.body.outcome === 'usage report' && /^Data Gateway usage \d{4}-\d{2}-\d{2}: /.test(String((note.body as { summary?: string }).summary))),
			'the usage report example sent its summary',
		);
		const expectedNotes = [...Array<string>(sends).fill('delivered'), 'review'];
		assert.deepEqual(notes.map((note) => note.body.outcome).sort(), expectedNotes, `notifications at the emulator: ${JSON.stringify(notes)}`);
		log(`notifications arrived at the emulator: ${sends} delivered, 1 review`);

		// 3. Work made before a restart.
		const kept = await rest.createWorkflow({
			name: 'Made before the restart',
			nodes: [{ id: 'k1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} }],
			connections: {},
			settings: { executionOrder: 'v1' },
		});
		await stopQuietly(first, 'first start');
		log('Ctrl-C: stopped quietly with exit 0');

		// 4. Second start: the same sandbox.
		const secondStarted = Date.now();
		const second = npmStart(env);
		running.push(second);
		await waitReady(second);
		log(`second start ready in ${Math.round((Date.now() - secondStarted) / 1000)} s`);
		rest = await session(n8nPort);
		const workflows = await rest.workflows();
		assert.ok(workflows.some((workflow) => workflow.id === kept.id && workflow.name === 'Made before the restart'), 'the workflow made before the restart is there');
		for (const example of examples) {
			assert.equal(workflows.filter((workflow) => workflow.name === example.name).length, 1, `"${example.name}" once after the restart`);
		}
		assert.ok((await rest.executions()).length >= allExecutions.length, 'executions kept');
		assert.equal((await rest.testCredential(CREDENTIAL_ID)).status, 'OK', 'credential test after the restart');
		log('after a restart: workflow, executions and owner login kept; examples not duplicated');

		// 5. A busy port: the second start holds N8N_PORT.
		const busy = npmStart(env);
		const busyCode = await busy.exited;
		assert.equal(busyCode, 1, `a busy port exits 1:\n${busy.output()}`);
		assert.match(busy.output(), new RegExp(`Port ${n8nPort} \\(n8n\\) is already in use\\. Pick another with N8N_PORT`), busy.output());
		assert.doesNotMatch(busy.output(), STACK_FRAME, `no stack for a busy port:\n${busy.output()}`);
		log('busy port: names N8N_PORT, no stack');
		await stopQuietly(second, 'second start');

		// 6. --reset starts over.
		const third = npmStart(env, ['--reset']);
		running.push(third);
		await waitReady(third);
		rest = await session(n8nPort);
		const afterReset = await rest.workflows();
		assert.ok(!afterReset.some((workflow) => workflow.id === kept.id), 'reset removed the workflow');
		assert.deepEqual(afterReset.map((workflow) => workflow.name).sort(), examples.map((example) => example.name).sort(), 'reset: only the examples');
		assert.deepEqual(await rest.executions(), [], 'reset: no executions');
		await stopQuietly(third, 'after reset');
		log('--reset: a clean sandbox with the examples');
		log(`passed in ${Math.round((Date.now() - started) / 1000)} s`);
	} finally {
		await stopAll(running);
		rmSync(sandboxDir, { recursive: true, force: true });
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
