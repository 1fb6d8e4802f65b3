import { randomUUID } from 'node:crypto';

import { StoreUnavailable, type DurableStore } from '../durableStore';
import { decideClaim, decideRelease, decideReserve, decideSent, type ItemKeys, type RunIdentity } from './decisions';
import { JointCalls, type JointAnswer } from './jointCalls';
import { KnownValues } from './knownValues';
import { countKeyOf, messageKeyOf, sendKeyOf, StagedValues, UnnamedKey } from './recordValues';
import { countWindows, type SendDecision, type SmsLimits } from './rules';

/** One send (or change) the records decide on. */
export interface RecordedSend {
	itemIndex: number;
	/** The number, for the per-number limits; absent for signature and template changes. */
	phone?: string;
	/** The message's fingerprint (account, number, signature, template and variables), or the change's. */
	message: string;
}

/** A claim's answer: send now, another execution started the message (it sends it), or a per-number limit is full. */
export type ClaimAnswer = 'go' | 'taken' | { limit: string };

/** Which node run the records belong to: sends are keyed by node, execution, run index and item. */
export interface RecordsScope {
	/** The workflow and node IDs. */
	node: string;
	execution: string;
	runIndex: number;
}

export interface RecordRules {
	/** Undefined for signature and template creates, which use only the repeat window. */
	limits?: SmsLimits;
	repeatWindowMinutes: number;
}

/** The records could not be written or read; `kept` says what stays in the store, if anything. */
export class RecordsFailure extends Error {
	constructor(
		readonly store: string,
		readonly reason: string,
		/** The items whose records stay in the store, and in which state. */
		readonly kept: { reserved: number[]; unknown: number[] },
		/** The failed update certainly wrote nothing (the store refused it): what `kept` names is there, not maybe. */
		readonly certain = false,
	) {
		super(reason);
		this.name = 'RecordsFailure';
	}
}

/** Items per store update: one atomic decision each, small enough for one Redis script. */
const ITEMS_PER_UPDATE = 50;
/** Updates of one step (reserve, mark sent, release) in flight at once: their round trips overlap on Redis. */
const CHUNKS_AT_ONCE = 8;
/** Tries of one store update; each decision is safe to run again (see decisions.ts). */
const TRIES = 3;
/** A send record outlives the repeat window, and a day for a retry of the same execution. */
const SEND_RECORD_MS = 24 * 3_600_000;

/** What stays in the store after a failure, named in the node's error. */
const recordsFailure = (store: string, reason: string, kept: RecordsFailure['kept'], certain = false) => new RecordsFailure(store, reason, kept, certain);

const RESULT = 'send-records';
/** Failures of an update none of whose tries can have written (the store refused before writing): nothing of its items is kept. */
const unwritten = new WeakSet<object>();
const wroteNothing = (error: unknown) => error instanceof StoreUnavailable && !error.maybeWritten;
/** The items of a step whose update was applied, and those whose update may have been (its answer was lost). */
interface Touched {
	applied: Set<ItemKeys>;
	maybe: Set<ItemKeys>;
}
const newTouched = (): Touched => ({ applied: new Set(), maybe: new Set() });
/** The items' keys; without the counts for decisions that never touch them (mark sent, and a claim's first try). */
const keysOfItems = (items: ItemKeys[], counts = true) =>
	[...new Set(items.flatMap((item) => [item.sendKey, item.messageKey, ...(counts ? item.countKeys : [])]))];
/** The number each key of the items is about (StoreWrite.phone): what erasing that number finds. */
function phonesOfItems(items: ItemKeys[]): Map<string, string> {
	const phones = new Map<string, string>();
	for (const { phone, sendKey, messageKey, countKeys } of items) if (phone !== undefined) for (const key of [sendKey, messageKey, ...countKeys]) phones.set(key, phone);
	return phones;
}
const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The send records of one node run on the durable store (docs/gateway-api.md names the gateway's
 * own limits these mirror): each item's send goes reserved → outcome unknown (written before the
 * paid call) → sent, or is released when it certainly failed or never started. Every step is
 * one atomic store update for up to ITEMS_PER_UPDATE items, retried, and safe to retry.
 */
export class SendRecords {
	private readonly run: RunIdentity;
	/** Items this run reserved, and whether their paid call started. */
	private readonly held = new Map<number, { keys: ItemKeys; started: boolean }>();
	/** What this run's updates left in the store: saves Redis a read on the next update of the same keys (the other stores read locally). */
	private readonly known?: KnownValues;

	constructor(
		readonly store: DurableStore,
		private readonly scope: RecordsScope,
		private readonly rules: RecordRules,
	) {
		const windowMs = Math.max(0, Math.round(rules.repeatWindowMinutes * 60_000));
		this.run = { token: randomUUID(), execution: scope.execution, windowMs, sendTtlMs: Math.max(windowMs, SEND_RECORD_MS) };
		if (store.kind === 'redis') this.known = new KnownValues();
	}

	/** The repeat window these records keep, in minutes; 0 when off. Held here only. */
	get repeatWindowMinutes(): number {
		return this.rules.repeatWindowMinutes;
	}

	private keysOf(send: RecordedSend, now: number): ItemKeys {
		const { node, execution, runIndex } = this.scope;
		const windows = countWindows(this.rules.limits, send.phone, now);
		return {
			itemIndex: send.itemIndex,
			phone: send.phone,
			sendKey: sendKeyOf(node, execution, runIndex, send.itemIndex),
			// With a window of 0 too, under a key of its own (it guards nothing): a crashed run's reservations are found there and taken over.
			messageKey: messageKeyOf(node, send.phone, this.run.windowMs > 0 ? send.message : `no window|${send.message}`),
			windows,
			countKeys: windows.map((window) => countKeyOf(node, send.phone, window)),
		};
	}

	/** One atomic update over the items' keys, tried again when it fails; the answer is checked. */
	private async update<T>(items: ItemKeys[], decide: (values: StagedValues, item: ItemKeys) => T, counts = true): Promise<T[]> {
		const keys = keysOfItems(items, counts);
		const phones = phonesOfItems(items);
		let failure: unknown;
		let mayHaveWritten = false;
		for (let attempt = 0; attempt < TRIES; attempt++) {
			let staged: StagedValues | undefined;
			try {
				const answer: unknown = await this.store.update(
					keys,
					(read, now) => {
						const values = (staged = new StagedValues(keys, read, now, phones));
						const results = items.map((item) => decide(values, item));
						return { writes: values.writes(), result: { kind: RESULT, results } };
					},
					this.known?.guess(keys),
				);
				const { kind, results } = (answer ?? {}) as { kind?: unknown; results?: unknown };
				if (kind !== RESULT || !Array.isArray(results) || results.length !== items.length || !staged) throw new Error(`${this.store.label} answered an update with something unexpected`);
				// The last decision is the one the store applied.
				this.known?.remember(keys, staged);
				return results as T[];
			} catch (error) {
				this.known?.forget(keys);
				failure = error;
				if (!wroteNothing(error) && !(error instanceof UnnamedKey)) mayHaveWritten = true;
				// Asking again would need the same key again: the caller names more keys instead.
				if (error instanceof UnnamedKey) break;
			}
		}
		if (!mayHaveWritten && failure instanceof Error) unwritten.add(failure);
		throw failure;
	}

	/**
	 * The items' updates, ITEMS_PER_UPDATE items each, in item order: up to CHUNKS_AT_ONCE at once
	 * while their keys are apart (a shared key, such as a number's counts, waits for the updates
	 * before it), so that Redis's round trips overlap. When one fails, the rest already started end
	 * before it is thrown (the caller then releases what they took); none starts after it.
	 */
	private async inChunks<T>(items: ItemKeys[], decide: (values: StagedValues, item: ItemKeys) => T, counts = true, touched?: Touched): Promise<T[]> {
		const results: T[][] = [];
		let running: Array<Promise<unknown>> = [];
		let keysInFlight = new Set<string>();
		const settle = async () => {
			const failed = (await Promise.allSettled(running)).find((outcome) => outcome.status === 'rejected');
			running = [];
			keysInFlight = new Set();
			if (failed) throw (failed as PromiseRejectedResult).reason;
		};
		for (let start = 0, index = 0; start < items.length; start += ITEMS_PER_UPDATE, index++) {
			const chunk = items.slice(start, start + ITEMS_PER_UPDATE);
			const keys = keysOfItems(chunk, counts);
			if (running.length >= CHUNKS_AT_ONCE || keys.some((key) => keysInFlight.has(key))) await settle();
			for (const key of keys) keysInFlight.add(key);
			// `touched`: the items whose update was applied, or may have been.
			running.push(
				this.update(chunk, decide, counts).then(
					(answers) => {
						chunk.forEach((item) => touched?.applied.add(item));
						results[index] = answers;
					},
					(error: unknown) => {
						if (!unwritten.has(error as object)) chunk.forEach((item) => touched?.maybe.add(item));
						throw error;
					},
				),
			);
		}
		await settle();
		return results.flat();
	}

	/**
	 * Decides every send of the run in item order, at the store's time, and returns the decisions
	 * (the caller keeps them; the records keep only the reservations). When the store fails, the
	 * parts already taken are released and the error (a RecordsFailure) says nothing was sent;
	 * when that release fails too, its `kept` names the reservations that may stay.
	 */
	async reserve(sends: RecordedSend[]): Promise<Map<number, SendDecision>> {
		const decisions = new Map<number, SendDecision>();
		if (sends.length === 0) return decisions;
		let items: ItemKeys[] = [];
		const touched = newTouched();
		try {
			const now = await this.store.now();
			if (!Number.isFinite(now)) throw new Error(`${this.store.label} gave a time that is not a number`);
			items = sends.map((send) => this.keysOf(send, now));
			const results = await this.inChunks(items, (values, item) => decideReserve(values, this.run, item), true, touched);
			items.forEach((item, index) => {
				decisions.set(item.itemIndex, results[index]);
				if (results[index].kind === 'send') this.held.set(item.itemIndex, { keys: item, started: false });
			});
			return decisions;
		} catch (error) {
			// Only what was, or may have been, reserved is released, and named when that fails: a refused update kept nothing.
			const reserved = items.filter((item) => touched.applied.has(item) || touched.maybe.has(item));
			const release = await this.tryRelease(reserved);
			const certain = release === 'refused' && touched.maybe.size === 0;
			throw recordsFailure(this.store.label, reasonOf(error), { reserved: release === 'released' ? [] : reserved.map((item) => item.itemIndex), unknown: [] }, certain);
		}
	}

	/**
	 * Just before the item's paid call: its record becomes "outcome unknown", so that whatever
	 * happens next, no execution sends it again within the window. A message another execution took
	 * over but only reserved is taken back (the first claim wins); `taken`: another execution
	 * started it and sends it. Throws a RecordsFailure when the store fails: the item is then
	 * not sent, and its reservation is released, or, when that release fails too, named in the
	 * failure's `kept` as possibly still in the store. Claims asked while another is with the store go
	 * together in the next update (jointCalls.ts); each still answers before its own paid call.
	 */
	async claim(itemIndex: number): Promise<ClaimAnswer> {
		const held = this.held.get(itemIndex);
		if (!held) throw new Error(`Item ${itemIndex + 1} has no send reservation`);
		return await this.claims.ask(itemIndex);
	}

	private readonly claims = new JointCalls<number, ClaimAnswer>(ITEMS_PER_UPDATE, async (itemIndexes) => await this.claimTogether(itemIndexes));

	/**
	 * One update for the claims of a group. When it fails, the group's reservations are released
	 * and each claim fails saying so; when that release fails too, each names its item as kept.
	 */
	private async claimTogether(itemIndexes: number[]): Promise<Array<JointAnswer<ClaimAnswer>>> {
		const holds = itemIndexes.map((itemIndex) => this.held.get(itemIndex));
		const items = holds.flatMap((held) => held?.keys ?? []);
		try {
			const claim = (values: StagedValues, item: ItemKeys) => decideClaim(values, this.run, item);
			// Only a send that lost its reservation meanwhile needs its counts: the rest claim without reading them.
			const answers = await this.update(items, claim, false).catch(async (error: unknown) => (error instanceof UnnamedKey ? await this.update(items, claim) : Promise.reject(error)));
			return holds.map((held, index) => {
				if (!held) return { error: new Error(`Item ${itemIndexes[index] + 1} has no send reservation`) };
				const answer = answers[items.indexOf(held.keys)];
				if (answer === 'go') held.started = true;
				else this.held.delete(itemIndexes[index]);
				return { value: answer };
			});
		} catch (error) {
			const release = await this.tryRelease(items);
			if (release === 'released') for (const itemIndex of itemIndexes) this.held.delete(itemIndex);
			return itemIndexes.map((itemIndex) => ({
				error: recordsFailure(this.store.label, reasonOf(error), { reserved: release === 'released' ? [] : [itemIndex], unknown: [] }, release === 'refused'),
			}));
		}
	}

	/**
	 * The gateway took the sends: their records say so, with the task IDs. When this fails they stay
	 * "outcome unknown", which guards the same; the returned failure lets the node say so.
	 */
	async markSent(sent: Map<number, string | null>): Promise<RecordsFailure | undefined> {
		const items = [...sent.keys()].flatMap((itemIndex) => this.held.get(itemIndex)?.keys ?? []);
		try {
			await this.inChunks(items, (values, item) => decideSent(values, this.run, item, sent.get(item.itemIndex) ?? null), false);
			this.known?.forget(keysOfItems(items));
			return undefined;
		} catch (error) {
			return recordsFailure(this.store.label, reasonOf(error), { reserved: [], unknown: items.map((item) => item.itemIndex) });
		}
	}

	/**
	 * Gives back the items' records: their sends certainly failed or never started. Tried again;
	 * when it still fails, a RecordsFailure names what stays in the store.
	 */
	async release(itemIndexes: number[]): Promise<void> {
		const items = itemIndexes.flatMap((itemIndex) => this.held.get(itemIndex)?.keys ?? []);
		if (items.length === 0) return;
		const touched = newTouched();
		try {
			await this.inChunks(items, (values, item) => decideRelease(values, this.run, item), true, touched);
		} catch (error) {
			const kept = { reserved: [] as number[], unknown: [] as number[] };
			for (const item of items) (this.held.get(item.itemIndex)?.started ? kept.unknown : kept.reserved).push(item.itemIndex);
			throw recordsFailure(this.store.label, reasonOf(error), kept, touched.applied.size === 0 && touched.maybe.size === 0);
		}
		for (const item of items) this.held.delete(item.itemIndex);
		this.known?.forget(keysOfItems(items));
	}

	/** Releases every reservation whose paid call never started (a failure stopped the batch first). */
	async releaseUnstarted(): Promise<void> {
		await this.release([...this.held].filter(([, held]) => !held.started).map(([itemIndex]) => itemIndex));
	}

	/** Items that hold a reservation. */
	holding(): number[] {
		return [...this.held.keys()];
	}

	/** Releases the items: 'released', 'refused' (the store certainly changed nothing), or 'failed' (it may have). */
	private async tryRelease(items: ItemKeys[]): Promise<'released' | 'refused' | 'failed'> {
		if (items.length === 0) return 'released';
		const touched = newTouched();
		try {
			await this.inChunks(items, (values, item) => decideRelease(values, this.run, item), true, touched);
			return 'released';
		} catch {
			return touched.applied.size === 0 && touched.maybe.size === 0 ? 'refused' : 'failed';
		}
	}
}
