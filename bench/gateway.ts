/** The emulator in its own process, so that its CPU time and memory are not counted as the node's. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import { freePort, REPO_ROOT } from '../scripts/n8n-runtime';
import type { EmulatorConfig, Faults } from '../test/emulator/server';

export interface EmulatorProcess {
	url: string;
	demo: { appCode: string; memberAppCode: string; signatureId: string; templateId: string; templateWithoutVariablesId: string };
	setFaults(faults: Faults): Promise<void>;
	configure(config: Partial<EmulatorConfig>): Promise<void>;
	ledger(): Promise<{ totals: { calls: number; billedCalls: number; rejected429: number; faulted: number }; calls: Array<{ at: number; path: string; kind: string; code: number | null }> }>;
	reset(): Promise<void>;
	stop(): Promise<void>;
}

export async function startEmulatorProcess(): Promise<EmulatorProcess> {
	const port = await freePort();
	const child: ChildProcess = spawn(process.execPath, [join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(REPO_ROOT, 'test', 'emulator', 'cli.ts'), '--port', String(port)], {
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	await new Promise<void>((ready, fail) => {
		child.once('exit', (code) => fail(new Error(`emulator exited (${code})`)));
		child.stdout?.on('data', (chunk: Buffer) => {
			if (chunk.toString().includes('listening on')) ready();
		});
	});
	const url = `http://127.0.0.1:${port}`;
	const admin = async (method: string, path: string, body?: unknown) => {
		const response = await fetch(`${url}/__emulator/${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
		return (await response.json()) as never;
	};
	const config = (await admin('GET', 'config')) as { demo: EmulatorProcess['demo'] };
	return {
		url,
		demo: config.demo,
		setFaults: async (faults) => await admin('PUT', 'faults', faults),
		configure: async (next) => await admin('PATCH', 'config', next),
		ledger: async () => await admin('GET', 'ledger'),
		reset: async () => await admin('POST', 'reset'),
		stop: async () => {
			const exited = new Promise((done) => child.once('exit', done));
			child.kill('SIGTERM');
			await exited;
		},
	};
}
