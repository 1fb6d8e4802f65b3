/**
 * Issue 33 item 13, through n8n-core: cancelling the execution (n8n's own cancel, which aborts the
 * signal every node gets) ends a lookup whose answer's headers have arrived and whose body stalls.
 * n8n marks the run cancelled at once without waiting for the node, so what is checked is the
 * request itself: undici reports it ended with an error long before the credential's Timeout.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { WorkflowExecute } from 'n8n-core';

import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow } from '../harness/workflow';
import { beforeGuard } from './gatewayClient';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

/** Resolves with the first message on an undici diagnostics channel about a request to `path`. */
function nextOn(channel: string, path: string): Promise<unknown> {
	return new Promise((resolve) => {
		const listener = (message: unknown) => {
			if (!(message as { request: { path: string } }).request.path.startsWith(path)) return;
			unsubscribe(channel, listener);
			resolve(message);
		};
		subscribe(channel, listener);
	});
}

afterEach(() => jest.restoreAllMocks());

it("n8n's cancel of the execution ends a lookup whose body stalls after the headers", async () => {
	// Headers and the first bytes of the body, then nothing for ten minutes.
	emulator.setFaults({ sequence: [{ kind: 'endless', intervalMs: 600_000 }] });
	// The execution n8n-core starts, as n8n holds it to cancel it.
	let execution: { cancel(): void } | undefined;
	const original = WorkflowExecute.prototype.processRunExecutionData;
	jest.spyOn(WorkflowExecute.prototype, 'processRunExecutionData').mockImplementation(function (this: WorkflowExecute, ...args) {
		const started = original.apply(this, args);
		execution = started;
		return started;
	});

	const headers = nextOn('undici:request:headers', '/telecom/identify');
	const ended = nextOn('undici:request:error', '/telecom/identify');
	const run = runWorkflow({
		steps: [{ name: 'Lookup', type: new DataGatewayTelephone(), parameters: { phoneNumber: '13800138017' } }],
		items: [{}],
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url, timeoutSeconds: 60, maxRetries: 0 } },
	});
	await beforeGuard(headers, 5000);
	execution?.cancel();
	expect(execution).toBeDefined();
	const { error } = (await beforeGuard(ended, 5000)) as { error: Error };
	expect(error.message).toBe('the execution was cancelled');
	expect((await run).run.status).toBe('canceled');
	expect(emulator.ledger().byPath['/telecom/identify']?.calls).toBe(1);
});
