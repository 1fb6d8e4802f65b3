/**
 * Issue 33 item 13: a cancelled execution ends a call whose answer has begun. bounds.test.ts
 * cancels once the gateway has the request, before its headers reach the client; here the client
 * has the headers (undici reports them on its diagnostics channel before its handler reads them)
 * and the body stalls. The Timeout is far off: only the cancel can end the call before the guard.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

import { beforeGuard, callsTo, client, emulator, failureOf, passthrough, useEmulator } from './gatewayClient';

useEmulator();

const HEADERS_CHANNEL = 'undici:request:headers';

/** Resolves once the client has received the headers of an answer from `path`. */
function headersArrive(path: string): Promise<number> {
	return new Promise((resolve) => {
		const onHeaders = (message: unknown) => {
			const { request, response } = message as { request: { path: string }; response: { statusCode: number } };
			if (!request.path.startsWith(path)) return;
			unsubscribe(HEADERS_CHANNEL, onHeaders);
			resolve(response.statusCode);
		};
		subscribe(HEADERS_CHANNEL, onHeaders);
	});
}

describe('a cancel after the answer has begun', () => {
	beforeEach(async () => {
		// Headers and the first bytes of the body, then nothing for ten minutes.
		await emulator.setFaults({ sequence: [{ kind: 'endless', intervalMs: 600_000 }] });
	});

	it('ends a lookup at once, as cancelled, not retried', async () => {
		const cancel = new AbortController();
		const headers = headersArrive('/telecom/identify');
		const call = failureOf(client({ timeoutMs: 30_000, maxRetries: 3 }).call('telephoneIdentify', { tel: '13800138016' }, passthrough, { signal: cancel.signal }));
		expect(await beforeGuard(headers, 5000)).toBe(200);
		cancel.abort();
		const failure = await beforeGuard(call, 5000);
		expect(failure.kind).toBe('cancelled');
		expect(failure.message).toBe('the execution was cancelled');
		expect((await callsTo('/telecom/identify')).calls).toBe(1);
	});

	it('ends an SMS send at once, as cancelled (it may have been sent: never sent again)', async () => {
		const cancel = new AbortController();
		const headers = headersArrive('/sms/send');
		const send = client({ appCode: emulator.demo.appCode, timeoutMs: 30_000 }).call(
			'smsSend',
			{ signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: '13900000072', params: { code: '1234' } },
			passthrough,
			{ signal: cancel.signal },
		);
		expect(await beforeGuard(headers, 5000)).toBe(200);
		cancel.abort();
		const failure = await beforeGuard(failureOf(send), 5000);
		expect(failure.kind).toBe('cancelled');
		expect(failure.message).toBe('the execution was cancelled');
		expect((await callsTo('/sms/send')).calls).toBe(1);
	});
});
