/**
 * `npm run test:e2e:delivery` (after `npm run build`): delivery reports tied to their send, in
 * real n8n 2.x with the package installed as a community package and the examples imported.
 * The order example (run as from the editor) sends with a reference; the report reaching the active
 * trigger updates the order's row in n8n's Data table; a report the emulator withholds is found by
 * the catch-up example's Check Pending Deliveries, which updates the row too, and is not found
 * twice; a send made in another process (`n8n execute`) gets its reference on its report too. The
 * rows are read back by a workflow that posts them to the emulator.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureRuntime, n8nCommand, N8nRest, packPackage, setupOwner, startN8n, type Runtime } from '../../scripts/n8n-runtime';
import { credentialNameFor, prepareSandbox, webhookPathOf, type ExampleWorkflow } from '../../scripts/sandbox';
import { startEmulator, type Emulator } from '../emulator/server';
import { parsePrintedRun } from './printedRun';
import { manualStart } from './moneySafety';

const HOUR = 3_600_000;
const log = (text: string) => console.log(`[delivery e2e] ${text}`);

async function until<T>(read: () => T | Promise<T>, ok: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await read();
		if (ok(value)) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(value).slice(0, 1500)}`);
		await new Promise((done) => setTimeout(done, 250));
	}
}

/** Runs a stored workflow in its own process (`n8n execute`) and returns the items its last node output. */
async function executeElsewhere(runtime: Runtime, workflowId: string, userFolder: string, nodeName: string): Promise<Array<Record<string, unknown>>> {
	const result = await n8nCommand(runtime, ['execute', `--id=${workflowId}`, '--rawOutput'], { userFolder });
	assert.equal(result.code, 0, `n8n execute failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`);
	const output = parsePrintedRun<{
		status: string;
		data: { resultData: { runData: Record<string, Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }>> } }>> } };
	}>(result.stdout);
	assert.equal(output.status, 'success', `${workflowId} ends green`);
	return output.data.resultData.runData[nodeName][0].data.main[0].map((item) => item.json);
}

/** A send with a reference and nothing else: `n8n execute` has no Data table module, so the order example runs in the server. */
function sendElsewhereWorkflow(sms: { type: string; credentials: unknown }, reference: string): Record<string, unknown> {
	return {
		name: 'Send in another process',
		nodes: [
			manualStart,
			{
				id: 's2',
				name: 'Send',
				type: sms.type,
				typeVersion: 1.1,
				position: [220, 0],
				parameters: { resource: 'message', operation: 'send', signId: '1000', templateId: '1002', phone: '13912340009', variablesInput: 'none', reference },
				credentials: sms.credentials,
			},
		],
		connections: { Start: { main: [[{ node: 'Send', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

/** A workflow that posts every row of the Data table `sms_orders` to the emulator's notifications. */
function readOrdersWorkflow(notificationUrl: string): Record<string, unknown> {
	return {
		name: 'Read sms_orders',
		nodes: [
			manualStart,
			{
				id: 'r2',
				name: 'Rows',
				type: 'n8n-nodes-base.dataTable',
				typeVersion: 1.1,
				position: [220, 0],
				parameters: { resource: 'row', operation: 'get', dataTableId: { __rl: true, mode: 'name', value: 'sms_orders' }, returnAll: true },
			},
			{
				id: 'r3',
				name: 'Post',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [440, 0],
				parameters: { method: 'POST', url: notificationUrl, sendBody: true, specifyBody: 'json', jsonBody: '={{ JSON.stringify({ row: $json }) }}', options: {} },
			},
		],
		connections: { Start: { main: [[{ node: 'Rows', type: 'main', index: 0 }]] }, Rows: { main: [[{ node: 'Post', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

async function main() {
	const started = Date.now();
	const runtime = await ensureRuntime('2', log);
	const userFolder = mkdtempSync(join(tmpdir(), 'dgw-e2e-delivery-'));
	const packDir = mkdtempSync(join(tmpdir(), 'dgw-e2e-delivery-pack-'));
	let emulator: Emulator | undefined;
	try {
		emulator = await startEmulator({ reviewDelayMs: HOUR, deliveryDelayMs: HOUR, deliveryFailureShare: 0 });
		const notificationUrl = `${emulator.url}/__emulator/notifications`;
		const { examples } = await prepareSandbox(runtime, {
			userFolder,
			tarball: packPackage(packDir),
			gatewayUrl: emulator.url,
			appCode: emulator.demo.appCode,
			credentialName: credentialNameFor(emulator.url, true),
			notificationUrl,
		});
		const triggerPaths = Object.values(examples).map(webhookPathOf).filter((path): path is string => path !== undefined);
		const n8n = await startN8n(runtime, { userFolder, webhookPaths: triggerPaths });
		try {
			emulator.configure({ callbackUrl: triggerPaths.map((path) => `${n8n.url}/${path}`).join(',') });
			const rest = new N8nRest(n8n.url, await setupOwner(n8n.url, { email: 'delivery@example.com', password: 'Delivery-E2e-1', firstName: 'D', lastName: 'E' }));
			const readOrders = await rest.createWorkflow(readOrdersWorkflow(notificationUrl));
			const rows = async () => {
				await fetch(notificationUrl, { method: 'DELETE' });
				assert.equal((await rest.finishedExecution(await rest.runWorkflow(readOrders.id, 'Start'))).status, 'success', 'reading the Data table');
				const notes = emulator!.notifications().map((note) => (note.body as { row?: Record<string, unknown> }).row);
				return new Map(notes.filter((row) => row !== undefined).map((row) => [row.orderId as string, row]));
			};

			// 1. The order example, run as from the editor: two sends with their order numbers as Reference, one row each.
			assert.equal((await rest.finishedExecution(await rest.runWorkflow(examples['order-sms-reference'].id, 'Start'))).status, 'success', 'the order example ends green');
			const sentRows = await rows();
			assert.deepEqual([...sentRows.keys()].sort(), ['SO-1001', 'SO-1002']);
			assert.ok([...sentRows.values()].every((row) => row.deliveryStatus === 'sent' && typeof row.taskId === 'string'), JSON.stringify([...sentRows.values()]));
			const taskOf = (order: string) => sentRows.get(order)?.taskId as string;
			log('order example: 2 SMS sent with their order numbers as Reference, 2 rows in the Data table');

			// 2. SO-1001's report reaches the active trigger: it carries the reference and updates the row.
			emulator.finishPending('delivery', taskOf('SO-1001'));
			const delivered = await until(rows, (byOrder) => byOrder.get('SO-1001')?.deliveryStatus === 'delivered', 30_000, "SO-1001's row updated by its delivery report");
			assert.equal(delivered.get('SO-1002')?.deliveryStatus, 'sent');
			log("a delivery report carried its send's reference and updated the order's row");

			// 3. SO-1002's report is withheld; the catch-up (Skip Messages Younger Than 0) finds it, once.
			emulator.configure({ withholdReports: true });
			emulator.finishPending('delivery', taskOf('SO-1002'));
			emulator.configure({ withholdReports: false });
			const catchUp = examples['delivery-catch-up'] as ExampleWorkflow & { connections: unknown; settings: unknown };
			const nodes = catchUp.nodes.map((node) => (node.name === 'Check Pending Deliveries' ? { ...node, parameters: { ...node.parameters, checkOptions: { minAgeMinutes: 0 } } } : node));
			const copy = await rest.createWorkflow({ name: 'Catch-up now', nodes, connections: catchUp.connections, settings: catchUp.settings });
			emulator.resetLedger();
			assert.equal((await rest.finishedExecution(await rest.runWorkflow(copy.id, 'Every Hour'))).status, 'success', 'the catch-up ends green');
			assert.equal(emulator.ledger().byPath['/sms/query_status']?.calls, 1, 'only the message without a report was asked about');
			assert.equal((await rows()).get('SO-1002')?.deliveryStatus, 'delivered', "the catch-up updated SO-1002's row");
			assert.equal((await rest.finishedExecution(await rest.runWorkflow(copy.id, 'Every Hour'))).status, 'success');
			assert.equal(emulator.ledger().byPath['/sms/query_status']?.calls, 1, 'a second catch-up asks nothing');
			log('a withheld report was found by Check Pending Deliveries, once');

			// 4. A send made in another process (n8n execute): the trigger in the server finds its reference in the shared store.
			const smsNode = examples['order-sms-reference'].nodes.find((node) => node.name === 'Send Shipping Notice') as unknown as { type: string; credentials: unknown };
			const reference = `elsewhere-${Date.now()}`;
			const elsewhere = await rest.createWorkflow(sendElsewhereWorkflow(smsNode, reference));
			const [sent] = await executeElsewhere(runtime, elsewhere.id, userFolder, 'Send');
			assert.equal(sent.reference, reference);
			const reportRuns = async () => (await rest.executions()).filter((execution) => execution.workflowId === examples['delivery-reports'].id && execution.status === 'success');
			const before = (await reportRuns()).length;
			emulator.finishPending('delivery', sent.taskId as string);
			const [latest] = await until(reportRuns, (runs) => runs.length > before, 30_000, 'the report of the send made elsewhere');
			const execution = await rest.call<Record<string, unknown>>('GET', `executions/${latest.id}`);
			assert.ok(JSON.stringify(execution).includes(reference), `the trigger's item carries the reference of a send made in another process (needs a store shared by processes: the SQLite file or Redis)`);
			log('a report carried the reference of a send made in another process');

			const executions = await rest.executions();
			assert.deepEqual(executions.filter((execution) => execution.status !== 'success'), [], 'every execution green');
			log(`passed in ${Math.round((Date.now() - started) / 1000)} s`);
		} finally {
			await n8n.stop();
		}
	} finally {
		await emulator?.close();
		rmSync(userFolder, { recursive: true, force: true });
		rmSync(packDir, { recursive: true, force: true });
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
