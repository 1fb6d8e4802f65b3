/**
 * Usage → Get inside real n8n (issue 43): workflows that send SMS (one a repeat), look up a vehicle
 * and reuse its answer, each `n8n execute` its own process, then Usage → Get. What it says the runs
 * spent and saved matches the emulator's ledger to the fen (the SMS billed once delivered), and the
 * example workflow's daily report runs green.
 */
import assert from 'node:assert/strict';

import { n8nCommand } from '../../scripts/n8n-runtime';
import { importFile, oneNodeWorkflow, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

type Json = Record<string, unknown>;

async function execute(options: MoneySafetyOptions, id: string, node = 'Node'): Promise<Json[]> {
	const result = await n8nCommand(options.runtime, ['execute', `--id=${id}`, '--rawOutput'], options.environment);
	assert.equal(result.code, 0, `n8n execute ${id} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
	const run = parsePrintedRun<{ data: { resultData: { runData: Record<string, Array<{ data?: { main?: Array<Array<{ json: Json }>> } }>> } } }>(result.stdout);
	return (run.data.resultData.runData[node]?.[0]?.data?.main?.[0] ?? []).map((item) => item.json);
}

const fen = (yuan: number) => Math.round(yuan * 100);
type Period = { spentYuan: number; reused: { answers: number; savedYuan: number }; sms: { sent: number; segments: number; skipped: { repeat: number }; delivered: number } };

export async function checkUsage(options: MoneySafetyOptions): Promise<void> {
	const { emulator, typePrefix, log } = options;
	const credentials = { dataGatewayApi: { id: options.credentialId, name: 'Data Gateway' } };
	const sms = { type: `${typePrefix}dataGatewaySms`, typeVersion: 1.4, credentials };
	const send = {
		...sms,
		parameters: {
			resource: 'message',
			operation: 'send',
			signId: emulator.demo.signatureId,
			templateId: emulator.demo.templateId,
			phone: '={{ $json.phone }}',
			variablesInput: 'keyValue',
			variables: { variable: [{ name: 'code', value: '4321' }] },
		},
	};
	const detail = {
		type: `${typePrefix}dataGatewayVehicle`,
		typeVersion: 1.3,
		credentials,
		parameters: { resource: 'vehicle', operation: 'getDetail', carNumber: '={{ $json.plate }}', carType: '52', options: { reuseAnswersHours: 24 } },
	};
	await importFile(options, 'workflow', 'usage-send', oneNodeWorkflow('dgwUsageSend', [{ phone: '13966660001' }, { phone: '13966660002' }], send));
	await importFile(options, 'workflow', 'usage-lookup', oneNodeWorkflow('dgwUsageLookup', [{ plate: '粤BD66601' }], detail));
	await importFile(options, 'workflow', 'usage-get', oneNodeWorkflow('dgwUsageGet', [{}], { ...sms, parameters: { resource: 'usage', operation: 'get' } }));

	const before = (await execute(options, 'dgwUsageGet'))[0] as { today: Period };
	emulator.resetLedger();
	await execute(options, 'dgwUsageSend');
	const repeated = await execute(options, 'dgwUsageSend');
	assert.deepEqual(repeated.map((item) => item.sent), [false, false], `the second send is a repeat: ${JSON.stringify(repeated)}`);
	await execute(options, 'dgwUsageLookup');
	const reused = await execute(options, 'dgwUsageLookup');
	assert.equal(reused[0]?.reused, true, `the second lookup reuses: ${JSON.stringify(reused)}`);
	emulator.finishPending('delivery');
	const after = (await execute(options, 'dgwUsageGet'))[0] as { today: Period; optOutListSize: number };

	const ledger = emulator.ledger();
	const billed = ledger.totals.costYuan;
	const spent = after.today.spentYuan - before.today.spentYuan;
	assert.equal(fen(spent), fen(billed), `Usage → Get says ${spent} yuan spent by these runs; the gateway billed ${billed} yuan`);
	assert.equal(after.today.sms.sent - before.today.sms.sent, 2, 'two SMS sent');
	assert.equal(after.today.sms.segments - before.today.sms.segments, ledger.byPath['/sms/send']?.deliveredSegments, 'segments as billed');
	assert.equal(after.today.sms.skipped.repeat - before.today.sms.skipped.repeat, 2, 'two repeats skipped');
	assert.equal(after.today.reused.answers - before.today.reused.answers, 1, 'one answer reused');
	assert.equal(fen(after.today.reused.savedYuan - before.today.reused.savedYuan), fen(1.2), 'its price saved');
	log(`Usage → Get: ${spent.toFixed(4)} yuan spent by the runs, the ledger billed ${billed} yuan; 2 sent, 2 repeats, 1 answer reused (1.2 yuan saved)`);

	const report = await execute(options, 'dgwExampleUsageReport', 'Summary');
	assert.match(String(report[0]?.summary), /^Data Gateway usage \d{4}-\d{2}-\d{2}: /, `the example's summary: ${JSON.stringify(report)}`);
	assert.match(String(report[0]?.html), /<table/, 'the example makes an HTML table');
	log(`example usage report: ${String(report[0]?.summary)}`);
}
