/**
 * The same 400 paid lookups in real n8n 2.x: n8n's HTTP Request node with default settings, the
 * HTTP Request node with batching tuned to the cap, and the Data Gateway Vehicle node.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureRuntime, installAsCommunityPackage, n8nCommand, NODE_TYPE_PREFIX, packPackage } from '../scripts/n8n-runtime';
import type { EmulatorProcess } from './gateway';

export interface SideBySideRow {
	variant: string;
	ms: number;
	failedItems: number;
	billedCalls: number;
	rejected429: number;
	calls: number;
}

type Variant = { id: string; label: string; node: Record<string, unknown> };

function workflow(variant: Variant, plates: string[], emulator: EmulatorProcess) {
	const code = `const base = ${JSON.stringify(emulator.url)};\nreturn ${JSON.stringify(plates)}.map((plate) => ({ json: { plate, url: base + '/luoz/query?carNumber=' + encodeURIComponent(plate) + '&appCode=${emulator.demo.appCode}' } }));`;
	return {
		id: variant.id,
		name: variant.label,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{ id: 'start', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
			{ id: 'plates', name: 'Plates', type: 'n8n-nodes-base.code', typeVersion: 2, position: [200, 0], parameters: { jsCode: code } },
			{ id: 'lookup', name: 'Lookup', position: [400, 0], onError: 'continueRegularOutput', ...variant.node },
		],
		connections: {
			Start: { main: [[{ node: 'Plates', type: 'main', index: 0 }]] },
			Plates: { main: [[{ node: 'Lookup', type: 'main', index: 0 }]] },
		},
	};
}

export async function sideBySide(emulator: EmulatorProcess, plates: string[], rateCap: number): Promise<SideBySideRow[]> {
	const runtime = await ensureRuntime('2');
	const userFolder = mkdtempSync(join(tmpdir(), 'dgw-bench-'));
	// Installed as a user installs it (Community Nodes), from the built package.
	installAsCommunityPackage(runtime, userFolder, packPackage(join(userFolder, 'pack')));
	const environment = { userFolder };
	const variants: Variant[] = [
		{
			id: 'benchHttpDefault',
			label: 'HTTP Request node, default settings',
			node: { type: 'n8n-nodes-base.httpRequest', typeVersion: 4.2, parameters: { url: '={{ $json.url }}', options: {} } },
		},
		{
			id: 'benchHttpTuned',
			label: `HTTP Request node, batching ${rateCap / 4} every 250 ms`,
			node: {
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				parameters: { url: '={{ $json.url }}', options: { batching: { batch: { batchSize: rateCap / 4, batchInterval: 250 } } } },
			},
		},
		{
			id: 'benchDataGateway',
			label: 'Data Gateway Vehicle node, default settings',
			node: {
				type: `${NODE_TYPE_PREFIX}dataGatewayVehicle`,
				typeVersion: 1,
				parameters: { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}' },
				credentials: { dataGatewayApi: { id: 'dgw-bench', name: 'Bench gateway' } },
			},
		},
	];
	try {
		const staging = join(userFolder, 'import');
		mkdirSync(join(staging, 'workflows'), { recursive: true });
		writeFileSync(
			join(staging, 'credentials.json'),
			JSON.stringify([{ id: 'dgw-bench', name: 'Bench gateway', type: 'dataGatewayApi', data: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url } }]),
		);
		for (const variant of variants) writeFileSync(join(staging, 'workflows', `${variant.id}.json`), JSON.stringify(workflow(variant, plates, emulator)));
		for (const args of [
			['import:credentials', `--input=${join(staging, 'credentials.json')}`],
			['import:workflow', '--separate', `--input=${join(staging, 'workflows')}`],
		]) {
			const result = await n8nCommand(runtime, args, environment);
			if (result.code !== 0) throw new Error(`${args[0]} failed: ${result.stderr}`);
		}

		const rows: SideBySideRow[] = [];
		for (const variant of variants) {
			await emulator.reset();
			await emulator.setFaults({ rateCapPerSecond: rateCap, latencyMs: 50 });
			const result = await n8nCommand(runtime, ['execute', `--id=${variant.id}`, '--rawOutput'], environment);
			const start = result.stdout.search(/^[[{]\s*$/m);
			const run = start >= 0 ? JSON.parse(result.stdout.slice(start)) : undefined;
			const items: Array<{ json: Record<string, unknown> }> = run?.data?.resultData?.runData?.Lookup?.[0]?.data?.main?.[0] ?? [];
			const ledger = await emulator.ledger();
			const times = ledger.calls.filter((call) => call.kind !== 'delivery').map((call) => call.at);
			rows.push({
				variant: variant.label,
				ms: times.length ? Math.max(...times) - Math.min(...times) : 0,
				failedItems: items.length === plates.length ? items.filter((item) => item.json.error !== undefined).length : plates.length,
				billedCalls: ledger.totals.billedCalls,
				rejected429: ledger.totals.rejected429,
				calls: ledger.totals.calls,
			});
		}
		return rows;
	} finally {
		rmSync(userFolder, { recursive: true, force: true });
	}
}
