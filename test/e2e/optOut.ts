/**
 * The opt-out list inside real n8n (issue 34): a number added by one workflow's Opt-Out > Add is
 * refused by another workflow's Send, each `n8n execute` its own process, so the list reaches the
 * Send only through the durable store; removed, the number is sent. Judged by the emulator's ledger.
 */
import assert from 'node:assert/strict';

import { n8nCommand } from '../../scripts/n8n-runtime';
import { importFile, oneNodeWorkflow, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

type Json = Record<string, unknown>;

/** Start -> the items -> one SMS node, named SMS. */
const smsWorkflow = (id: string, items: Json[], node: Json) => oneNodeWorkflow(id, items, node, 'SMS');

async function execute(options: MoneySafetyOptions, id: string): Promise<Json[]> {
	const result = await n8nCommand(options.runtime, ['execute', `--id=${id}`, '--rawOutput'], options.environment);
	assert.equal(result.code, 0, `n8n execute ${id} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
	const run = parsePrintedRun<{ data: { resultData: { runData: Record<string, Array<{ data?: { main?: Array<Array<{ json: Json }>> } }>> } } }>(result.stdout);
	return (run.data.resultData.runData.SMS?.[0]?.data?.main?.[0] ?? []).map((item) => item.json);
}

export async function checkOptOut(options: MoneySafetyOptions): Promise<void> {
	const { emulator, typePrefix, log } = options;
	const sms = { type: `${typePrefix}dataGatewaySms`, typeVersion: 1.4, credentials: { dataGatewayApi: { id: options.credentialId, name: 'Data Gateway' } } };
	const list = (operation: string) => ({ ...sms, parameters: { resource: 'optOut', operation, phone: '={{ $json.phone }}' } });
	const send = {
		...sms,
		continueOnFail: true,
		parameters: {
			resource: 'message',
			operation: 'send',
			signId: emulator.demo.signatureId,
			templateId: emulator.demo.templateId,
			phone: '={{ $json.phone }}',
			variablesInput: 'keyValue',
			variables: { variable: [{ name: 'code', value: '1234' }] },
		},
	};
	await importFile(options, 'workflow', 'opt-out-add', smsWorkflow('dgwOptOutAdd', [{ phone: '+86 139 5555 0001' }], list('add')));
	await importFile(options, 'workflow', 'opt-out-remove', smsWorkflow('dgwOptOutRemove', [{ phone: '13955550001' }], list('remove')));
	await importFile(options, 'workflow', 'opt-out-send', smsWorkflow('dgwOptOutSend', [{ phone: '13955550001' }], send));
	emulator.resetLedger();
	const added = await execute(options, 'dgwOptOutAdd');
	assert.deepEqual(added, [{ phone: '13955550001', optedOut: true, alreadyListed: false }], `added: ${JSON.stringify(added)}`);
	const refused = await execute(options, 'dgwOptOutSend');
	assert.match(String(refused[0]?.error), /13955550001 is on this account's opt-out list: not sent/, `refused: ${JSON.stringify(refused)}`);
	assert.equal(emulator.ledger().calls.length, 0, 'no gateway call for the list or the refused send');
	await execute(options, 'dgwOptOutRemove');
	const sent = await execute(options, 'dgwOptOutSend');
	assert.equal(typeof sent[0]?.taskId, 'string', `sent after removal: ${JSON.stringify(sent)}`);
	assert.equal(emulator.ledger().byPath['/sms/send']?.calls, 1, 'one send, after the removal');
	log('opt-out list across processes: added by one workflow, refused by another\'s Send (0 sends), removed, then sent');
}
