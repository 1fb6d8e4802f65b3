/**
 * Issue 41 (part B) inside real n8n, SMS 1.5, each workflow an `n8n execute` process of its own,
 * sends one at a time (a credential with Max Concurrent Requests 1), judged by the emulator's ledger:
 * - a campaign of three with one opted-out number sends two under the default On Error;
 * - a number opted out by another process while the batch is sending is not texted: the emulator
 *   holds the first message's answer while another `n8n execute` adds the number, then lets it go;
 * - a batch running across its Send Window's end sends nothing after it: the store's clock of the
 *   sending process reads a file (storeClock.cjs, preloaded), set to 20:59:59 China time and moved
 *   to 21:00:00 while the first message's answer is held. No sleep anywhere.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { n8nCommand, REPO_ROOT } from '../../scripts/n8n-runtime';
import { importFile, oneNodeWorkflow, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

type Json = Record<string, unknown>;

const CREDENTIAL = { id: 'dgw-one-at-a-time', name: 'Data Gateway (one send at a time)' };

const smsWorkflow = (id: string, items: Json[], node: Json) => oneNodeWorkflow(id, items, node, 'SMS');

async function execute(options: MoneySafetyOptions, id: string, env: NodeJS.ProcessEnv = {}): Promise<Json[]> {
	const result = await n8nCommand(options.runtime, ['execute', `--id=${id}`, '--rawOutput'], { ...options.environment, env });
	assert.equal(result.code, 0, `n8n execute ${id} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
	const run = parsePrintedRun<{ data: { resultData: { runData: Record<string, Array<{ data?: { main?: Array<Array<{ json: Json }>> } }>> } } }>(result.stdout);
	return (run.data.resultData.runData.SMS?.[0]?.data?.main?.[0] ?? []).map((item) => item.json);
}

export async function checkLeaving(options: MoneySafetyOptions): Promise<void> {
	const { emulator, typePrefix, log } = options;
	await importFile(options, 'credentials', 'one-at-a-time', [{ ...CREDENTIAL, type: 'dataGatewayApi', data: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxConcurrent: 1 } }]);
	const sms = { type: `${typePrefix}dataGatewaySms`, typeVersion: 1.5, credentials: { dataGatewayApi: CREDENTIAL } };
	const add = { ...sms, parameters: { resource: 'optOut', operation: 'add', phone: '={{ $json.phone }}' } };
	const send = (sendOptions: Json = {}) => ({
		...sms,
		parameters: {
			resource: 'message',
			operation: 'send',
			signId: { __rl: true, mode: 'id', value: emulator.demo.signatureId },
			templateId: { __rl: true, mode: 'id', value: emulator.demo.templateId },
			phone: '={{ $json.phone }}',
			variablesInput: 'keyValue',
			variables: { variable: [{ name: 'code', value: '1234' }] },
			sendOptions,
		},
	});
	const sentTo = () => emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call').map((call) => call.phone);
	const numbers = (...lasts: number[]) => lasts.map((last) => ({ phone: `1395541${String(last).padStart(4, '0')}` }));

	// A campaign of three, the second number opted out earlier: two sent, the node green under the default On Error.
	const campaign = numbers(1, 2, 3);
	await importFile(options, 'workflow', 'leaving-add', smsWorkflow('dgwLeavingAdd', [campaign[1]], add));
	await importFile(options, 'workflow', 'leaving-campaign', smsWorkflow('dgwLeavingCampaign', campaign, send()));
	await execute(options, 'dgwLeavingAdd');
	emulator.resetLedger();
	const sentCampaign = await execute(options, 'dgwLeavingCampaign');
	assert.deepEqual(sentCampaign.map((item) => [item.phone, item.sent, item.optedOut]), [
		[campaign[0].phone, true, undefined],
		[campaign[1].phone, false, true],
		[campaign[2].phone, true, undefined],
	], `campaign: ${JSON.stringify(sentCampaign)}`);
	assert.deepEqual(sentTo(), [campaign[0].phone, campaign[2].phone], 'the campaign texted the two numbers not opted out');
	log('campaign of three, one number opted out, default On Error: 2 sent, the third says sent false and why');

	// Opted out by another process while the batch is sending: the number is not texted.
	const batch = numbers(11, 12, 13);
	await importFile(options, 'workflow', 'leaving-add-later', smsWorkflow('dgwLeavingAddLater', [batch[1]], add));
	await importFile(options, 'workflow', 'leaving-batch', smsWorkflow('dgwLeavingBatch', batch, send()));
	emulator.resetLedger();
	const held = emulator.holdAnswers('/sms/send');
	const sending = execute(options, 'dgwLeavingBatch');
	try {
		await held.arrived(1);
		await execute(options, 'dgwLeavingAddLater');
	} finally {
		held.release();
	}
	const sentBatch = await sending;
	assert.deepEqual(sentBatch.map((item) => [item.phone, item.sent]), [
		[batch[0].phone, true],
		[batch[1].phone, false],
		[batch[2].phone, true],
	], `batch: ${JSON.stringify(sentBatch)}`);
	assert.match(String(sentBatch[1].notSentBecause), /opt-out list/);
	assert.deepEqual(sentTo(), [batch[0].phone, batch[2].phone], 'the number opted out mid-batch was not texted');
	log('a number opted out by another n8n process while the batch was sending: not texted, the others sent');

	// A batch started at 20:59:59 with a window until 21:00: nothing leaves after 21:00.
	const clockFile = join(mkdtempSync(join(options.environment.userFolder, 'clock-')), 'now');
	writeFileSync(clockFile, String(Date.parse('2026-11-26T20:59:59+08:00')));
	const late = numbers(21, 22, 23, 24);
	const window = { sendWindow: { window: { startHour: 8, startMinute: 0, endHour: 21, endMinute: 0, outside: 'refuse' } } };
	await importFile(options, 'workflow', 'leaving-window', smsWorkflow('dgwLeavingWindow', late, send(window)));
	emulator.resetLedger();
	const hold = emulator.holdAnswers('/sms/send');
	const closing = execute(options, 'dgwLeavingWindow', { NODE_OPTIONS: `--require ${join(REPO_ROOT, 'test', 'e2e', 'storeClock.cjs')}`, DGW_E2E_CLOCK_FILE: clockFile });
	try {
		await hold.arrived(1);
		writeFileSync(clockFile, String(Date.parse('2026-11-26T21:00:00+08:00')));
	} finally {
		hold.release();
	}
	const sentLate = await closing;
	assert.deepEqual(sentLate.map((item) => item.sent), [true, false, false, false], `window: ${JSON.stringify(sentLate)}`);
	for (const item of sentLate.slice(1)) assert.equal(item.opensAt, '2026-11-27T08:00:00+08:00', `says when the window opens: ${JSON.stringify(item)}`);
	assert.deepEqual(sentTo(), [late[0].phone], 'one message left before 21:00, none after');
	log('a batch started at 20:59:59, window until 21:00: 1 sent before 21:00, 3 say sent false and when the window opens');
}
