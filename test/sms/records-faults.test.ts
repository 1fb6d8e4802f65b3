/**
 * Fault injection, property-based (fast-check): random batches (repeats, several numbers, a
 * per-minute limit near full) are sent through a real workflow (n8n-core) to the emulator, with a
 * store that fails from a generated call on, for a generated number of calls, in a generated way
 * (fails before writing; writes and loses the answer; answers garbage; hands over garbage values).
 * Then the same batch runs again on the healthy store, as a retried execution (a new execution
 * id) or a re-run of the same execution. The emulator's ledger says what was really sent.
 *
 * Invariant: in the faulty run every item is sent exactly once or "not sent" (records released,
 * or the error names what stays); the next run sends exactly what was not sent (within the
 * limit); every number's counts in the store equal the messages really sent to it.
 * Each store at hand runs it (test/harness/recordStores.ts): memory, SQLite, Redis. The day (China
 * time) is the limit near full: Redis keeps its own clock, and a day rarely turns within a run.
 */
import fc from 'fast-check';
import type { IDataObject } from 'n8n-workflow';

import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { StoreUnavailable, type DurableStore, type StoreDecision, type StoreGuess } from '../../nodes/shared/store/durableStore';
import { countKeyOf, sendKeyOf } from '../../nodes/shared/store/sendRecords/recordValues';
import * as openStore from '../../nodes/shared/store/openStore';
import { forgetAllExecutionMemory } from '../../nodes/shared/testing';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { recordStores } from '../harness/recordStores';
import { sendParameters } from '../harness/sms';
import { runWorkflow } from '../harness/workflow';

jest.setTimeout(300_000);

let emulator: Emulator;
useEmulator((started) => (emulator = started), { deliveryDelayMs: 60_000 }, { smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });

const AT = Date.parse('2026-11-22T02:30:30.000Z');
type FaultMode = 'throw-before' | 'throw-after' | 'garbage-answer' | 'garbage-values';
interface Fault {
	/** The store call (now, read or update, counted from 0 in the faulty run) that fails first. */
	from: number;
	calls: number;
	mode: FaultMode;
}

/** A store that fails as told, and otherwise does what the store under it does. */
class FaultyStore implements DurableStore {
	readonly kind;
	readonly label;
	private call = 0;
	fault?: Fault;

	constructor(private readonly inner: DurableStore) {
		this.kind = inner.kind;
		this.label = inner.label;
	}

	private failing(): FaultMode | undefined {
		const index = this.call++;
		const fault = this.fault;
		return fault && index >= fault.from && index < fault.from + fault.calls ? fault.mode : undefined;
	}

	private lost(): never {
		throw new StoreUnavailable(this.label, `${this.label}: the connection dropped (injected)`, { maybeWritten: true });
	}

	async now(): Promise<number> {
		const mode = this.failing();
		if (mode === 'garbage-answer' || mode === 'garbage-values') return Number.NaN;
		if (mode) this.lost();
		return await this.inner.now();
	}

	async read(keys: readonly string[]): Promise<Array<string | undefined>> {
		const mode = this.failing();
		if (mode === 'garbage-answer' || mode === 'garbage-values') return keys.map(() => '{garbage');
		if (mode) this.lost();
		return await this.inner.read(keys);
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>, guess?: StoreGuess): Promise<T> {
		const mode = this.failing();
		if (mode === 'throw-before') throw new StoreUnavailable(this.label, `${this.label}: OOM command not allowed (injected)`);
		if (mode === 'garbage-values') return await this.inner.update(keys, (values, now) => decide(values.map((value, index) => (index === 0 ? 'garbage' : value)), now), guess);
		const result = await this.inner.update(keys, decide, guess);
		if (mode === 'throw-after') this.lost();
		if (mode === 'garbage-answer') return 'OK' as unknown as T;
		return result;
	}
}


const sms = new DataGatewaySms();
let executions = 0;
const PHONES = ['13900001001', '13900001002', '13900001003'];

async function runBatch(store: DurableStore, items: IDataObject[], perDay: number, executionId: string) {
	const spy = jest.spyOn(openStore, 'openDurableStore').mockResolvedValue(store);
	try {
		const result = await runWorkflow({
			executionId,
			steps: [
				{
					name: 'SMS',
					type: sms,
					parameters: sendParameters(emulator, { variables: { variable: [{ name: '={{ $json.code === "bad" ? "other" : "code" }}', value: '={{ $json.code }}' }] }, sendOptions: { perMinute: 100, perHour: 100, perDay } }),
					settings: { continueOnFail: true },
				},
			],
			items,
			credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.appCode, baseUrl: emulator.url, maxConcurrent: 2, maxRetries: 0 } },
		});
		forgetAllExecutionMemory();
		return result.json();
	} finally {
		spy.mockRestore();
	}
}

const messageOf = (item: IDataObject) => `${item.phone}|{"${item.code === 'bad' ? 'other' : 'code'}":"${item.code}"}`;
/** Messages the gateway accepted, by number and variables. */
function acceptedByMessage(): Map<string, number> {
	const accepted = new Map<string, number>();
	for (const call of emulator.ledger().calls) {
		if (call.path !== '/sms/send' || call.kind !== 'call' || call.code !== 0) continue;
		const key = `${call.phone}|${call.params}`;
		accepted.set(key, (accepted.get(key) ?? 0) + 1);
	}
	return accepted;
}
const sentOut = (output: IDataObject) => typeof output.taskId === 'string' && output.skippedAsRepeat === false && output.deduplicated === false;
const saysKept = (output: IDataObject) => /may stay in .* as "outcome unknown"/.test(String(output.errorDescription ?? ''));

describe.each(recordStores())('send records under store faults (%s store)', (_name, openInner) => {
	it('every item is sent exactly once or not sent with its records released; the next run sends exactly the rest; counts equal sends', async () => {
		// Code "bad" names a variable the template lacks: the gateway refuses the send (certainly not sent), so its records are released.
		const batch = fc.array(fc.record({ phone: fc.constantFrom(...PHONES), code: fc.constantFrom('1', '2', 'bad') }), { minLength: 1, maxLength: 7 });
		const fault = fc.record({ from: fc.nat({ max: 24 }), calls: fc.integer({ min: 1, max: 4 }), mode: fc.constantFrom<FaultMode>('throw-before', 'throw-after', 'garbage-answer', 'garbage-values') });
		await fc.assert(
			fc.asyncProperty(batch, fault, fc.integer({ min: 1, max: 3 }), fc.boolean(), async (items, injected, perDay, sameExecution) => {
				emulator.reset();
				emulator.configure({ smsLimits: { perMinute: 100, perHour: 100, perDay: 100 } });
				const { store: inner } = await openInner(() => AT);
				const store = new FaultyStore(inner);
				store.fault = injected;
				const first = `property-${++executions}`;
				const faulty = await runBatch(store, items, perDay, first);

				// The faulty run: one output per item; no message twice; nothing skipped as a repeat in a fresh store.
				expect(faulty).toHaveLength(items.length);
				const afterFirst = acceptedByMessage();
				const sentFirst = new Map<string, number>();
				const keptUnknown = new Set<number>();
				for (const [index, output] of faulty.entries()) {
					expect(output.skippedAsRepeat === true).toBe(false);
					if (sentOut(output)) sentFirst.set(messageOf(items[index]), (sentFirst.get(messageOf(items[index])) ?? 0) + 1);
					else expect(String(output.error)).toMatch(/not sent/);
					// A record stays only where the error says it may; the store says whether it did.
					const [record] = await inner.read([sendKeyOf('test-workflow|step-0', first, 0, index)]);
					if (!sentOut(output) && record !== undefined) {
						expect(saysKept(output)).toBe(true);
						keptUnknown.add(index);
					}
				}
				expect(Object.fromEntries(afterFirst)).toEqual(Object.fromEntries(sentFirst));

				// The next run, on the healthy store: what the rules say, given what was really sent.
				store.fault = undefined;
				const again = await runBatch(store, items, perDay, sameExecution ? first : `property-${++executions}`);
				const perPhone = new Map<string, number>();
				const countFor = (phone: unknown) => perPhone.get(String(phone)) ?? 0;
				for (const [message, count] of afterFirst) perPhone.set(message.split('|')[0], countFor(message.split('|')[0]) + count);
				for (const index of keptUnknown) perPhone.set(String(items[index].phone), countFor(items[index].phone) + 1);
				const keptMessages = new Set([...keptUnknown].map((index) => messageOf(items[index])));
				again.forEach((output, index) => {
					const item = items[index];
					// Sent, and its record says so; or, when marking it sent failed too, still "outcome unknown": never sent again.
					if (sameExecution && sentOut(faulty[index])) return expect(output.deduplicated === true ? output.taskId : String(output.error)).toMatch(output.deduplicated === true ? String(faulty[index].taskId) : /unknown outcome/);
					if (sameExecution && keptUnknown.has(index)) return expect(String(output.error)).toMatch(/unknown outcome/);
					if (!sameExecution && (afterFirst.has(messageOf(item)) || keptMessages.has(messageOf(item)))) return expect(output).toMatchObject({ skippedAsRepeat: true });
					if (countFor(item.phone) >= perDay) return expect(String(output.error)).toMatch(/this node allows/);
					perPhone.set(String(item.phone), countFor(item.phone) + 1);
					if (item.code === 'bad') return expect(String(output.error)).toMatch(/not sent/);
					expect(output).toMatchObject({ skippedAsRepeat: false, taskId: expect.any(String) });
				});

				// Nothing went out twice: the gateway took exactly the messages the two runs say they sent.
				const saidSent = new Map<string, number>();
				[...faulty, ...again].forEach((output, index) => {
					const key = messageOf(items[index % items.length]);
					if (sentOut(output)) saidSent.set(key, (saidSent.get(key) ?? 0) + 1);
				});
				expect(Object.fromEntries(acceptedByMessage())).toEqual(Object.fromEntries(saidSent));

				// Counts in the store equal the messages really sent to each number (those kept as unknown count too).
				const sentTo = new Map<string, number>();
				for (const [message, count] of acceptedByMessage()) sentTo.set(message.split('|')[0], (sentTo.get(message.split('|')[0]) ?? 0) + count);
				for (const index of keptUnknown) sentTo.set(String(items[index].phone), (sentTo.get(String(items[index].phone)) ?? 0) + 1);
				const day = Math.floor(((await inner.now()) + 8 * 3_600_000) / 86_400_000);
				for (const phone of PHONES) {
					const [count] = await inner.read([countKeyOf('test-workflow|step-0', phone, { name: 'day', number: day })]);
					expect([phone, Number(count ?? 0)]).toEqual([phone, sentTo.get(phone) ?? 0]);
				}
			}),
			{ numRuns: Number(process.env.PROPERTY_RUNS ?? 150) },
		);
	});
});
