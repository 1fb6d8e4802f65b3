/**
 * Two OS processes on one host without Redis send the same 5 messages at one instant, 3 rounds
 * (a new message each round): each number is texted once per round, judged from the emulator's
 * ledger. Each process runs the SMS node through n8n-core as `n8n execute` does; they share the
 * SQLite store file, which is what keeps them from both sending.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { startScript } from './processes';

jest.setTimeout(180_000);

let emulator: Emulator;
useEmulator((started) => (emulator = started), { reviewDelayMs: 50, deliveryDelayMs: 100, deliveryFailureShare: 0 }, { smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });

let folder: string;
beforeAll(() => (folder = mkdtempSync(join(tmpdir(), 'dgw-sms-race-'))));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const PHONES = ['13700000001', '13700000002', '13700000003', '13700000004', '13700000005'];

/** Accepted texts per number, each as its template variables. */
function textsPerNumber(): Map<string, string[]> {
	const texts = new Map<string, string[]>();
	for (const call of emulator.ledger().calls) {
		if (call.path !== '/sms/send' || call.kind !== 'call' || call.code !== 0 || !call.phone) continue;
		texts.set(call.phone, [...(texts.get(call.phone) ?? []), call.params ?? '']);
	}
	return texts;
}

it('two processes sending the same 5 messages at one instant text each number once per round', async () => {
	// Two processes of one n8n: one user folder, so one key for the store's names (nameSecret.ts).
	const env = { ...process.env, DATA_GATEWAY_STORE_FILE: join(folder, 'store.sqlite'), EXECUTIONS_MODE: 'regular', N8N_USER_FOLDER: folder };
	const outcomes: unknown[] = [];
	for (let round = 1; round <= 3; round++) {
		const args = [emulator.url, emulator.demo.appCode, emulator.demo.signatureId, emulator.demo.templateId, `55${round}0`, PHONES.join(',')];
		const senders = [startScript(join(__dirname, 'smsSender.ts'), args, { env }), startScript(join(__dirname, 'smsSender.ts'), args, { env })];
		for (const sender of senders) expect(await sender.nextLine()).toBe('ready');
		for (const sender of senders) sender.child.stdin.write('go\n');
		const results = await Promise.all(senders.map(async (sender) => JSON.parse(await sender.nextLine()) as Array<Record<string, unknown>>));
		await Promise.all(senders.map((sender) => sender.ended));
		outcomes.push(results);
		// Every item ends sent by one process and not sent by the other (a repeat, or the other's send found).
		for (const [index] of PHONES.entries()) {
			const sent = results.filter((items) => typeof items[index].taskId === 'string' && items[index].sent !== false && items[index].sentEarlierInThisRun !== true);
			expect({ round, index, sent: sent.length }).toEqual({ round, index, sent: 1 });
		}
		const texts = textsPerNumber();
		for (const phone of PHONES) {
			const got = texts.get(phone) ?? [];
			expect({ round, phone, texted: got.filter((params) => params.includes(`"55${round}0"`)).length }).toEqual({ round, phone, texted: 1 });
		}
	}
	expect([...textsPerNumber().values()].flat()).toHaveLength(15);
});
