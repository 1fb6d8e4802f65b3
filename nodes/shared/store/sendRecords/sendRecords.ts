import { randomUUID } from 'node:crypto';

import type { DurableStore } from '../durableStore';
import { decideClaim, decideRelease, decideReserve, decideSent, type ItemKeys, type RunIdentity } from './decisions';
import { chunkedUpdates, ITEMS_PER_UPDATE } from './chunkedUpdates';
import { keysOfItems } from './itemKeys';
import { JointCalls, type JointAnswer } from './jointCalls';
import { KnownValues } from './knownValues';
import { oweRelease, paidRelease, payOwedReleases } from './owedReleases';
import { keysOfSend } from './recordKeys';
import { mayHaveApplied, reasonOf, recordsFailure, RecordsFailure } from './recordsFailure';
import { updateRecords } from './recordUpdate';
import { UnnamedKey, type StagedValues } from './recordValues';
import type { ClaimAnswer, ClaimGate, SendDecision, SmsLimits } from './rules';

export type { ClaimAnswer, ClaimGate } from './rules';

export { RecordsFailure } from './recordsFailure';

/** One send (or change) the records decide on. */
export interface RecordedSend {
	itemIndex: number;
	/** The number, for the per-number limits; absent for signature and template changes. */
	phone?: string;
	/** The message's fingerprint (account, number, signature, template and variables), or the change's. */
	message: string;
}

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

/** A send record outlives the repeat window, and a day for a retry of the same execution. */
export const SEND_RECORD_MS = 24 * 3_600_000;

/** How many sends a batch marks together while it goes on (markSentSoon); the fault tests lower it. */
export const sentMarking = { together: ITEMS_PER_UPDATE };

/**
 * The send records of one node run on the durable store (docs/gateway-api.md names the gateway's
 * own limits these mirror): each item's send goes reserved → outcome unknown (written before the
 * paid call) → sent, or is released when it certainly failed or never started. Every step is
 * one atomic store update for up to ITEMS_PER_UPDATE items, retried, and safe to retry.
 */
export class SendRecords {
	private readonly run: RunIdentity;
	/** Items this run reserved, whether their paid call started, and whether their record says sent. */
	private readonly held = new Map<number, { keys: ItemKeys; started: boolean; marked?: true }>();
	/** Sends waiting to be marked while the batch goes on (markSentSoon), and the mark under way. */
	private readonly toMark = new Map<number, string | null>();
	private marking: Promise<unknown> | undefined;
	/** What this run's updates left in the store: saves Redis a read on the next update of the same keys (the other stores read locally). */
	private readonly known?: KnownValues;
	/** Items whose release failed: no message went out for them, and their records are taken back when the store answers (owedReleases.ts). */
	private readonly owed = new Map<number, ItemKeys>();

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

	/** The items' updates in chunks (chunkedUpdates.ts), each one retried update (recordUpdate.ts). */
	private async inChunks<T>(items: ItemKeys[], decide: (values: StagedValues, item: ItemKeys) => T, counts = true, touched?: Set<ItemKeys>): Promise<T[]> {
		return await chunkedUpdates(items, counts, async (chunk) => await updateRecords(this.store, this.known, chunk, decide, counts), touched);
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
		// Stryker disable next-line ArrayDeclaration: before the items are known no update touched any, and the filter below drops what is not touched
		let items: ItemKeys[] = [];
		const touched = new Set<ItemKeys>();
		// What an earlier run of this process could not release, taken back first: it may hold these very messages.
		await payOwedReleases(this.store.label);
		try {
			const now = await this.store.now();
			if (!Number.isFinite(now)) throw new Error(`${this.store.label} gave a time that is not a number`);
			items = sends.map((send) => keysOfSend(this.scope, this.rules, this.run, send, now));
			const results = await this.inChunks(items, (values, item) => decideReserve(values, this.run, item), true, touched);
			items.forEach((item, index) => {
				decisions.set(item.itemIndex, results[index]);
				if (results[index].kind === 'send') this.held.set(item.itemIndex, { keys: item, started: false });
			});
			return decisions;
		} catch (error) {
			// Only what an update applied, or may have, can stay: a store that refused every update kept nothing.
			const taken = items.filter((item) => touched.has(item));
			let failure: unknown;
			const released = await this.tryRelease(taken, (failed) => (failure = failed));
			throw recordsFailure(this.store.label, reasonOf(error), { reserved: released ? [] : taken.map((item) => item.itemIndex) }, !released && !mayHaveApplied(failure));
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
	async claim<Stop = never>(itemIndex: number, gate?: ClaimGate<Stop>): Promise<ClaimAnswer<Stop>> {
		const held = this.held.get(itemIndex);
		if (!held) throw new Error(`Item ${itemIndex + 1} has no send reservation`);
		return (await this.claims.ask({ itemIndex, gate })) as ClaimAnswer<Stop>;
	}

	private readonly claims = new JointCalls<{ itemIndex: number; gate?: ClaimGate<unknown> }, ClaimAnswer<unknown>>(ITEMS_PER_UPDATE, async (asked) => await this.claimTogether(asked));

	/**
	 * One update for the claims of a group, each gate decided first in it. When it fails (its answer
	 * lost, it may have been applied), the group's records are released and each claim fails saying
	 * so; when that release fails too, each names its item as not started but maybe recorded so, and
	 * this process owes its release. An item its gate stopped keeps its reservation, unstarted:
	 * releaseUnstarted gives it back.
	 */
	private async claimTogether(asked: Array<{ itemIndex: number; gate?: ClaimGate<unknown> }>): Promise<Array<JointAnswer<ClaimAnswer<unknown>>>> {
		const itemIndexes = asked.map(({ itemIndex }) => itemIndex);
		const holds = itemIndexes.map((itemIndex) => this.held.get(itemIndex));
		const items = holds.flatMap((held) => held?.keys ?? []);
		const gates = new Map(asked.flatMap(({ itemIndex, gate }) => (gate ? [[itemIndex, gate] as const] : [])));
		const gateKeys = [...gates.values()].flatMap((gate) => gate.keys);
		const riders = this.store.kind === 'redis' ? this.takeMarks(ITEMS_PER_UPDATE - items.length) : new Map<ItemKeys, string | null>();
		const together = [...items, ...riders.keys()];
		try {
			const claim = (values: StagedValues, item: ItemKeys): ClaimAnswer<unknown> | void => {
				if (riders.has(item)) return decideSent(values, this.run, item, riders.get(item) ?? null);
				const stopped = gates.get(item.itemIndex)?.stop((key) => values.current(key), values.now);
				return stopped === undefined ? decideClaim(values, this.run, item) : { stopped };
			};
			// Only a send that lost its reservation meanwhile needs its counts: the rest claim without reading them.
			const answers = await updateRecords(this.store, this.known, together, claim, false, gateKeys).catch(async (error: unknown) =>
				error instanceof UnnamedKey ? await updateRecords(this.store, this.known, together, claim, true, gateKeys) : Promise.reject(error),
			);
			this.marked([...riders.keys()]);
			return holds.map((held, index) => {
				if (!held) return { error: new Error(`Item ${itemIndexes[index] + 1} has no send reservation`) };
				const answer = answers[items.indexOf(held.keys)] as ClaimAnswer<unknown>;
				if (answer === 'go') held.started = true;
				else if (typeof answer !== 'object' || !('stopped' in answer)) this.held.delete(itemIndexes[index]);
				return { value: answer };
			});
		} catch (error) {
			let failure: unknown;
			const released = await this.tryRelease(items, (failed) => (failure = failed));
			for (const itemIndex of itemIndexes) this.held.delete(itemIndex);
			// A claim whose answer was lost may have recorded the send as started; one the store refused left it reserved.
			const kept = (itemIndex: number) => (released ? {} : mayHaveApplied(error) ? { notStarted: [itemIndex] } : { reserved: [itemIndex] });
			return itemIndexes.map((itemIndex) => ({ error: recordsFailure(this.store.label, reasonOf(error), kept(itemIndex), !released && !mayHaveApplied(failure)) }));
		}
	}

	/**
	 * Values just read from the store (the opt-out list before the batch), for a later update that
	 * names the same keys (a claim's gate) to guess on Redis rather than read them again.
	 */
	readBefore(keys: readonly string[], values: ReadonlyArray<string | undefined>): void {
		this.known?.assume(keys, values);
	}

	/**
	 * The gateway took the sends: their records say so, with the task IDs. When this fails they stay
	 * "outcome unknown", which guards the same; the returned failure lets the node say so.
	 */
	async markSent(sent: Map<number, string | null>): Promise<RecordsFailure | undefined> {
		await this.marking;
		return await this.markNow(sent);
	}

	/**
	 * A send the gateway took, marked while the batch's calls wait for the gateway rather than after
	 * its last send (bench section 12): together with others once `sentMarking.together` wait, or on
	 * Redis in the next claims' update (claimTogether), as a group's own script would hold the server
	 * the next claims wait for. What fails here stays unmarked, and markSent at the end marks it again.
	 */
	markSentSoon(itemIndex: number, taskId: string | null): void {
		this.toMark.set(itemIndex, taskId);
		if (this.store.kind === 'redis' || this.toMark.size < sentMarking.together || this.marking) return;
		const group = new Map(this.toMark);
		this.toMark.clear();
		this.marking = this.markNow(group).finally(() => (this.marking = undefined));
	}

	/** Up to `room` sends waiting to be marked, taken off the wait for one claims' update. */
	private takeMarks(room: number): Map<ItemKeys, string | null> {
		const taken = new Map<ItemKeys, string | null>();
		for (const [itemIndex, taskId] of this.toMark) {
			if (taken.size >= room) break;
			this.toMark.delete(itemIndex);
			const keys = this.held.get(itemIndex)?.keys;
			if (keys) taken.set(keys, taskId);
		}
		return taken;
	}

	/** The items' records say sent: later marks skip them, and their keys need no guess any more. */
	private marked(items: ItemKeys[]): void {
		this.known?.forget(keysOfItems(items));
		for (const item of items) {
			const held = this.held.get(item.itemIndex);
			// Stryker disable next-line ConditionalExpression: a send marked is held (only a release drops a hold, and none follows a send the gateway took); the check spares a crash.
			if (held) held.marked = true;
		}
	}

	private async markNow(sent: Map<number, string | null>): Promise<RecordsFailure | undefined> {
		const items = [...sent.keys()].flatMap((itemIndex) => this.held.get(itemIndex) ?? []).filter((held) => !held.marked).map(({ keys }) => keys);
		try {
			await this.inChunks(items, (values, item) => decideSent(values, this.run, item, sent.get(item.itemIndex) ?? null), false);
			this.marked(items);
			return undefined;
		} catch (error) {
			return recordsFailure(this.store.label, reasonOf(error), { unknown: items.map((item) => item.itemIndex) });
		}
	}

	/**
	 * Gives back the items' records: their sends certainly failed or never started. Tried again;
	 * when it still fails, a RecordsFailure names what may stay in the store, and this process owes
	 * the release (taken back once the store answers again).
	 */
	async release(itemIndexes: number[]): Promise<void> {
		const holds = itemIndexes.flatMap((itemIndex) => this.held.get(itemIndex) ?? []);
		const items = holds.map(({ keys }) => keys);
		const kept = { reserved: [] as number[], notStarted: [] as number[] };
		for (const { keys, started } of holds) (started ? kept.notStarted : kept.reserved).push(keys.itemIndex);
		for (const item of items) this.held.delete(item.itemIndex);
		let failure: unknown;
		if (!(await this.tryRelease(items, (error) => (failure = error)))) throw recordsFailure(this.store.label, reasonOf(failure), kept, !mayHaveApplied(failure));
	}

	/** Releases every reservation whose paid call never started (a failure stopped the batch first), and what this run owes. */
	async releaseUnstarted(): Promise<void> {
		await this.release([...this.held].filter(([, held]) => !held.started).map(([itemIndex]) => itemIndex));
		if (await this.takeBack()) paidRelease(this.store.label, this);
	}

	/** Releases what this run owes (owedReleases.ts); true once nothing is owed. */
	async takeBack(): Promise<boolean> {
		const items = [...this.owed.values()];
		try {
			await this.inChunks(items, (values, item) => decideRelease(values, this.run, item));
		} catch {
			return false;
		}
		for (const item of items) if (this.owed.get(item.itemIndex) === item) this.owed.delete(item.itemIndex);
		return this.owed.size === 0;
	}

	/** Items that hold a reservation. */
	holding(): number[] {
		return [...this.held.keys()];
	}

	/** Releases the items' records; when that fails, owes it (this process takes them back later) and answers false. */
	private async tryRelease(items: ItemKeys[], failed: (error: unknown) => void): Promise<boolean> {
		try {
			await this.inChunks(items, (values, item) => decideRelease(values, this.run, item));
			this.known?.forget(keysOfItems(items));
			return true;
		} catch (error) {
			failed(error);
			for (const item of items) this.owed.set(item.itemIndex, item);
			oweRelease(this.store.label, this, Date.now() + this.run.sendTtlMs);
			return false;
		}
	}
}
