/**
 * Issue 24's race without Redis, in real n8n: two `n8n execute` processes on one host, one user
 * folder (so one SQLite store file), the same workflow sending the same 5 messages at one instant,
 * 3 rounds. Each number must be texted once per round, judged from the emulator's ledger.
 *
 * Both processes wait at a barrier (an HTTP Request node answered only when both have arrived), so
 * their executions overlap by construction, not by luck of start-up times. The barrier also hands
 * out the round's code: a new message each round, with Max per Number per Minute at 3 (the rounds),
 * instead of moving the store's clock: that needs a test-only knob in the shipped package, and the
 * same message a minute later would still be a repeat under the default 10-minute window. The
 * repeat window and the other limits keep their defaults; within one minute, a count kept for a
 * message not sent would make round 3 meet the per-minute limit.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { n8nCommand } from '../../scripts/n8n-runtime';
import { codeVariable, sendParameters } from '../harness/sms';
import { importFile, manualStart, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

type Json = Record<string, unknown>;

const WORKFLOW_ID = 'dgwSameHostRace';
const PHONES = ['13900040001', '13900040002', '13900040003', '13900040004', '13900040005'];
const ROUNDS = 3;
const PROCESSES = 2;

/** Holds each arrival until PROCESSES have arrived for the round, then answers all with the round's code. */
async function startBarrier() {
	let round = 0;
	let waiting: ServerResponse[] = [];
	const arrivals: number[] = [];
	const server = createServer((request, response) => {
		request.resume();
		arrivals.push(round);
		waiting.push(response);
		if (waiting.length < PROCESSES) return;
		const body = JSON.stringify({ round, code: codeOf(round) });
		for (const held of waiting) held.writeHead(200, { 'content-type': 'application/json' }).end(body);
		waiting = [];
	});
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/barrier`,
		startRound: (next: number) => (round = next),
		arrivalsIn: (which: number) => arrivals.filter((arrived) => arrived === which).length,
		close: async () => {
			for (const held of waiting) held.destroy();
			await new Promise((done) => server.close(done));
		},
	};
}

const codeOf = (round: number) => `77${round}0`;

/** Start -> Barrier (one request for the whole run) -> the 5 numbers -> Send. */
function raceWorkflow(options: MoneySafetyOptions, barrierUrl: string): Json {
	const to = (node: string) => [{ node, type: 'main', index: 0 }];
	const numbers = JSON.stringify(PHONES.map((phone) => ({ phone })));
	return {
		id: WORKFLOW_ID,
		name: 'Same host race: two processes, one SQLite store',
		active: false,
		nodes: [
			manualStart,
			{ id: 'barrier', name: 'Barrier', type: 'n8n-nodes-base.httpRequest', typeVersion: 4.2, position: [220, 0], parameters: { url: barrierUrl, options: { timeout: 300_000 } } },
			{
				id: 'list',
				name: 'List',
				type: 'n8n-nodes-base.set',
				typeVersion: 3.4,
				position: [440, 0],
				parameters: { assignments: { assignments: [{ id: 'a1', name: 'list', value: numbers, type: 'array' }] }, options: {} },
			},
			{ id: 'split', name: 'Split', type: 'n8n-nodes-base.splitOut', typeVersion: 1, position: [660, 0], parameters: { fieldToSplitOut: 'list', options: {} } },
			{
				id: 'sms',
				name: 'Send',
				type: `${options.typePrefix}dataGatewaySms`,
				typeVersion: 1,
				position: [880, 0],
				parameters: sendParameters(options.emulator, { variables: codeVariable("={{ $('Barrier').first().json.code }}"), sendOptions: { perMinute: ROUNDS } }),
				credentials: { dataGatewayApi: { id: options.credentialId, name: 'Data Gateway (emulator)' } },
			},
		],
		connections: { Start: { main: [to('Barrier')] }, Barrier: { main: [to('List')] }, List: { main: [to('Split')] }, Split: { main: [to('Send')] } },
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

/** What one process's run of the Send node output, and when it ran (n8n's own start time and duration). */
interface SendRun {
	items: Json[];
	startedAt: number;
	endedAt: number;
}

/** Runs the workflow in its own n8n process. */
async function execute(options: MoneySafetyOptions): Promise<SendRun> {
	const result = await n8nCommand(options.runtime, ['execute', `--id=${WORKFLOW_ID}`, '--rawOutput'], options.environment);
	assert.equal(result.code, 0, `n8n execute ${WORKFLOW_ID} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
	type NodeRun = { startTime: number; executionTime: number; data?: { main?: Array<Array<{ json: Json }>> } };
	const run = parsePrintedRun<{ data: { resultData: { runData: Record<string, NodeRun[]> } } }>(result.stdout);
	const send = run.data.resultData.runData.Send?.[0];
	assert.ok(send, `the Send node did not run:\n${result.stdout.slice(-3000)}`);
	return { items: (send.data?.main?.[0] ?? []).map((item) => item.json), startedAt: send.startTime, endedAt: send.startTime + send.executionTime };
}

/** Texts the gateway accepted in this round, by number. */
function textsOfRound(options: MoneySafetyOptions, round: number): Map<string, number> {
	const texts = new Map<string, number>();
	for (const call of options.emulator.ledger().calls) {
		if (call.path !== '/sms/send' || call.kind !== 'call' || call.code !== 0 || !call.phone) continue;
		if (!(call.params ?? '').includes(`"${codeOf(round)}"`)) continue;
		texts.set(call.phone, (texts.get(call.phone) ?? 0) + 1);
	}
	return texts;
}

export async function checkSameHostRace(options: MoneySafetyOptions): Promise<void> {
	const { emulator, log } = options;
	const barrier = await startBarrier();
	// The gateway's own per-number limits are not under test: the node's records in the SQLite file are.
	const gatewayLimits = emulator.config().smsLimits;
	emulator.configure({ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });
	// Each send takes a while, so the second process decides while the first is still sending.
	emulator.setFaults({ latencyMs: 100 });
	try {
		await importFile(options, 'workflow', 'same-host-race', raceWorkflow(options, barrier.url));
		emulator.resetLedger();
		for (let round = 1; round <= ROUNDS; round++) {
			barrier.startRound(round);
			const runs = await Promise.all(Array.from({ length: PROCESSES }, async () => await execute(options)));
			assert.equal(barrier.arrivalsIn(round), PROCESSES, `round ${round}: both executions waited at the barrier together`);

			const sentBy = runs.map(({ items }) => items.filter((item) => typeof item.taskId === 'string' && item.skippedAsRepeat !== true && item.deduplicated !== true).length);
			for (const [index, phone] of PHONES.entries()) {
				const outcomes = runs.map(({ items }) => items[index]);
				assert.ok(
					outcomes.every((item) => item?.phone === phone),
					`round ${round}: each process output item ${index + 1} for ${phone}: ${JSON.stringify(outcomes)}`,
				);
				const sent = outcomes.filter((item) => typeof item.taskId === 'string' && item.skippedAsRepeat !== true && item.deduplicated !== true);
				const skipped = outcomes.filter((item) => item.skippedAsRepeat === true);
				assert.deepEqual([sent.length, skipped.length], [1, PROCESSES - 1], `round ${round}, ${phone}: sent by one process, a repeat in the other: ${JSON.stringify(outcomes)}`);
			}
			const texts = textsOfRound(options, round);
			assert.deepEqual(
				PHONES.map((phone) => texts.get(phone) ?? 0),
				PHONES.map(() => 1),
				`round ${round}: each number texted once (ledger: ${JSON.stringify([...texts])})`,
			);
			// Measured, not asserted (it rests on scheduling): how long both Send nodes were running at once.
			const together = Math.min(...runs.map((run) => run.endedAt)) - Math.max(...runs.map((run) => run.startedAt));
			log(`same host, no Redis, round ${round}: 2 processes met at the barrier, Send nodes ran ${runs.map((run) => `${run.endedAt - run.startedAt} ms`).join(' and ')}, ${together} ms at once; sent ${sentBy.join(' + ')} of 5, each number texted once`);
		}
		const accepted = emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call' && call.code === 0);
		assert.equal(accepted.length, PHONES.length * ROUNDS, `${PHONES.length * ROUNDS} texts in all`);
		log(`same host, no Redis: ${accepted.length} texts over ${ROUNDS} rounds of 2 processes, one per number per round`);
	} finally {
		emulator.clearFaults();
		emulator.configure({ smsLimits: gatewayLimits });
		emulator.resetLedger();
		await barrier.close();
	}
}
