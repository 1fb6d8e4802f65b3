import {
	countWindows,
	limitProblem,
	REPEAT_BUCKETS,
	type CountWindow,
	type GuardedSend,
	type SendRecordStore,
	type SmsLimits,
	type StoreDecision,
} from './rules';
import type { NodeRecords } from '../nodeRecords';
import { registerProcessState } from '../../state/processState';

/**
 * The send records in n8n's processed-data store (NodeRecords): n8n keeps one row of hashed
 * values per node, read and written whole by every call, so a call costs O(values kept) and the
 * store cannot be split per number. This store therefore asks n8n once per run (more rounds only
 * when a number's count is not known in this process), asks only values it keeps when it sends,
 * and removes values only on the rare paths (a repeat, a refusal, a send that certainly failed):
 * n8n's removal searches the row once per value.
 *
 * Values (n8n hashes them):
 * - `sms-repeat|<message>|<bucket length>|<bucket>` for the current bucket and the 9 before it
 *   (buckets of a tenth of the window). Any of them already there means the message went out
 *   within the window: a repeat, unless this execution recorded it (`sms-execution|<execution>|<message>`),
 *   so loops within one execution send again. A send keeps all ten: an older bucket recorded now
 *   never changes a later answer, as the current one recorded with it covers every later window
 *   that the older one does.
 * - `sms-slot|<phone>|<window>|<window number>|<k>`, k = 1..limit, for the minute, hour and day:
 *   a send takes the next free slot of each window; none free means the limit is reached. Slots
 *   are probed one at a time from the count this process last saw, so only a slot that is taken
 *   is asked.
 */
export class DatabaseRecordStore implements SendRecordStore {
	readonly acrossProcesses = false;
	readonly where = "n8n's database";

	constructor(
		private readonly records: NodeRecords,
		/** Names the node (workflow and node ID): the slot counts this process saw are kept per node. */
		private readonly scope: string,
		private readonly executionId: string,
		private readonly limits: SmsLimits | undefined,
		private readonly repeatWindowMinutes: number,
	) {}

	get acrossRestarts(): boolean {
		return this.records.acrossRestarts;
	}

	async reserve(sends: GuardedSend[], now: number): Promise<Map<number, StoreDecision>> {
		const plans = sends.map((send) => new ItemPlan(send, this.repeatValues(send.message, now), countWindows(this.limits, send.phone, now), this.executionId));
		const slots = new SlotBook(this.scope);
		const recorded = new Set<string>();
		const kept = new Set<string>();
		let firstRound = true;
		for (;;) {
			const asked: Array<{ plan: ItemPlan; window: number; slot: number; value: string }> = [];
			for (const plan of plans) {
				if (plan.decided) continue;
				plan.windows.forEach((window, index) => {
					if (plan.slots.has(index) || plan.waiting.has(index)) return;
					const slot = slots.next(plan.send.phone as string, window);
					if (slot === undefined) plan.waiting.add(index);
					else if (slot.recorded) plan.slots.set(index, slot.value);
					else asked.push({ plan, window: index, slot: slot.number, value: slot.value });
				});
			}
			const values = asked.map(({ value }) => value);
			if (firstRound) for (const plan of plans) values.push(...plan.repeat, ...(plan.marker ? [plan.marker] : []));
			if (values.length === 0) {
				// Nothing more can be asked: an item still waiting for a slot is over the limit, and gives its other slots to later items.
				const refused = plans.find((plan) => !plan.decided && plan.waiting.size > 0);
				if (!refused) break;
				const window = refused.windows[[...refused.waiting][0]];
				refused.decide({ kind: 'limit', problem: limitProblem(refused.send.phone, window) });
				for (const [index, value] of refused.slots) slots.giveBack(refused.send.phone as string, refused.windows[index], value);
				for (const plan of plans) plan.waiting.clear();
				continue;
			}
			const { before } = await this.records.checkAndRecord([...new Set(values)]);
			for (const value of values) if (!before.has(value)) recorded.add(value);
			if (firstRound) {
				for (const plan of plans) {
					const seen = plan.repeat.some((value) => before.has(value));
					if (!seen || (plan.marker && before.has(plan.marker))) continue;
					plan.decide({ kind: 'repeat' });
					for (const [index, value] of plan.slots) slots.giveBack(plan.send.phone as string, plan.windows[index], value);
				}
				firstRound = false;
			}
			for (const { plan, window, slot, value } of asked) {
				const phone = plan.send.phone as string;
				if (before.has(value)) {
					slots.taken(phone, plan.windows[window], slot);
				} else if (plan.decided) {
					slots.giveBack(phone, plan.windows[window], value, slot);
				} else {
					plan.slots.set(window, value);
					slots.taken(phone, plan.windows[window], slot);
				}
			}
			for (const plan of plans) plan.waiting.clear();
			for (const plan of plans) {
				if (!plan.decided && plan.slots.size === plan.windows.length) plan.decide({ kind: 'send' });
			}
		}

		const decisions = new Map<number, StoreDecision>();
		for (const plan of plans) {
			const decision = plan.decision ?? { kind: 'send' };
			const holds = decision.kind === 'send' ? [...plan.repeat, ...(plan.marker ? [plan.marker] : []), ...plan.slots.values()].filter((value) => recorded.has(value)) : [];
			for (const value of holds) kept.add(value);
			decisions.set(plan.send.itemIndex, { decision, holds });
		}
		// What was recorded only to be asked (a repeat's values, a refused item's, a slot nobody took) goes again.
		const unused = [...recorded].filter((value) => !kept.has(value));
		if (unused.length > 0) await this.records.remove(unused);
		slots.forgetFrom(unused);
		return decisions;
	}

	async release(holds: string[]): Promise<void> {
		await this.records.remove(holds);
		new SlotBook(this.scope).forgetFrom(holds);
	}

	private repeatValues(message: string, now: number): string[] {
		if (this.repeatWindowMinutes <= 0) return [];
		const bucketMs = Math.max(1, Math.round((this.repeatWindowMinutes * 60_000) / REPEAT_BUCKETS));
		const current = Math.floor(now / bucketMs);
		return Array.from({ length: REPEAT_BUCKETS }, (_, back) => `sms-repeat|${message}|${bucketMs}|${current - back}`);
	}
}

class ItemPlan {
	readonly marker?: string;
	/** The slot value taken in each window (by index in `windows`). */
	readonly slots = new Map<number, string>();
	/** Windows that had no slot to ask in this round. */
	readonly waiting = new Set<number>();
	decision?: StoreDecision['decision'];

	constructor(
		readonly send: GuardedSend,
		readonly repeat: string[],
		readonly windows: CountWindow[],
		executionId: string,
	) {
		if (repeat.length > 0) this.marker = `sms-execution|${executionId}|${send.message}`;
	}

	get decided(): boolean {
		return this.decision !== undefined;
	}

	decide(decision: StoreDecision['decision']) {
		this.decision = decision;
	}
}

const slotValue = (phone: string, window: CountWindow, slot: number) => `sms-slot|${phone}|${window.name}|${window.number}|${slot}`;

/**
 * The highest slot this process saw taken per number and window, so that the next send asks the
 * next slot instead of every slot from 1. A hint only: n8n's answer decides, and a slot another
 * process freed is found again when the window starts over.
 */
const seenSlots = new Map<string, { highest: number; endsAt: number }>();
const MAX_SEEN_SLOTS = 60_000;

/** Slot numbers of one reservation: the next to ask per number and window, and slots recorded but free. */
class SlotBook {
	private readonly nextSlot = new Map<string, number>();
	private readonly free = new Map<string, Array<{ slot: number; value: string }>>();

	constructor(private readonly scope: string) {}

	private key(phone: string, window: CountWindow) {
		return `${this.scope}|${phone}|${window.name}|${window.number}`;
	}

	/** The slot to give an item: a free one already recorded, else the next to ask, else none (the limit). */
	next(phone: string, window: CountWindow): { number: number; value: string; recorded: boolean } | undefined {
		const key = this.key(phone, window);
		const free = this.free.get(key);
		if (free && free.length > 0) {
			const { slot, value } = free.shift() as { slot: number; value: string };
			return { number: slot, value, recorded: true };
		}
		const slot = this.nextSlot.get(key) ?? (seenSlots.get(key)?.highest ?? 0) + 1;
		if (slot > window.allowed) return undefined;
		this.nextSlot.set(key, slot + 1);
		return { number: slot, value: slotValue(phone, window, slot), recorded: false };
	}

	/** The slot is taken (by this item or before): the next send asks from the one after. */
	taken(phone: string, window: CountWindow, slot: number) {
		this.remember(this.key(phone, window), slot, window.endsAt);
	}

	/** A recorded slot no item holds: the next item of the run takes it before a new one is asked. */
	giveBack(phone: string, window: CountWindow, value: string, slot = Number(value.slice(value.lastIndexOf('|') + 1))) {
		const key = this.key(phone, window);
		const free = this.free.get(key) ?? [];
		free.push({ slot, value });
		free.sort((a, b) => a.slot - b.slot);
		this.free.set(key, free);
	}

	private remember(key: string, slot: number, endsAt: number) {
		const seen = seenSlots.get(key);
		if (seen && seen.highest >= slot) return;
		if (seenSlots.size >= MAX_SEEN_SLOTS) {
			const now = Date.now();
			for (const [other, { endsAt: ends }] of seenSlots) if (ends < now) seenSlots.delete(other);
			// Still full of live windows: the oldest hints go (a lost hint costs a probe, never a wrong answer).
			// Down to three quarters, so the next sweep is a quarter of the size away: O(1) per send.
			for (const other of seenSlots.keys()) {
				if (seenSlots.size < MAX_SEEN_SLOTS * 0.75) break;
				seenSlots.delete(other);
			}
		}
		seenSlots.set(key, { highest: slot, endsAt });
	}

	/** Slots removed from the store are free again: the next send asks from the lowest of them. */
	forgetFrom(values: string[]) {
		for (const value of values) {
			if (!value.startsWith('sms-slot|')) continue;
			const cut = value.lastIndexOf('|');
			const key = `${this.scope}|${value.slice('sms-slot|'.length, cut)}`;
			const slot = Number(value.slice(cut + 1));
			const seen = seenSlots.get(key);
			if (seen && seen.highest >= slot) seen.highest = slot - 1;
		}
	}
}

registerProcessState('seenSlots', () => seenSlots.clear());
