/**
 * The send-record decisions (store/sendRecords/decisions.ts) on staged values, without a store:
 * what each writes and for how long. test/unit/sms-records.test.ts runs them through the records on a
 * store; test/sms/records-faults.test.ts under faults.
 */
import { decideClaim, decideRelease, decideReserve, decideSent, type ItemKeys, type RunIdentity } from '../../nodes/shared/store/sendRecords/decisions';
import { countKeyOf, messageKeyOf, sendKeyOf, StagedValues, UnnamedKey } from '../../nodes/shared/store/sendRecords/recordValues';
import { countWindows } from '../../nodes/shared/store/sendRecords/rules';
import { valueTag } from '../../nodes/shared/store/keyName';

/** Records list the counts a send took by keyed tag, never by a key holding the phone number. */
const tagsOf = (keys: readonly string[]) => keys.map(valueTag);

const NOW = Date.UTC(2026, 10, 22, 2, 0, 30);
const MINUTE = 60_000;
const LIMITS = { perMinute: 1, perHour: 5, perDay: 10 };
const PHONE = '13900000001';

function itemOf(execution: string, itemIndex = 0, limits = LIMITS): ItemKeys {
	const windows = countWindows(limits, PHONE, NOW);
	return {
		itemIndex,
		phone: PHONE,
		sendKey: sendKeyOf('node', execution, 0, itemIndex),
		messageKey: messageKeyOf('node', PHONE, 'print'),
		windows,
		countKeys: windows.map((window) => countKeyOf('node', PHONE, window)),
	};
}
const runOf = (execution: string, windowMs = 10 * MINUTE, token = `${execution} token`): RunIdentity => ({ token, execution, windowMs, sendTtlMs: Math.max(windowMs, 24 * 60 * MINUTE) });

/** A store's contents as plain values, with the expiry each write gave. */
class Contents {
	values = new Map<string, string>();
	ttls = new Map<string, number>();
	/** When each key kept expires, by the last write's time and expiry. */
	expiresAt = new Map<string, number>();

	/** Runs one decision over the item's keys at `now`, as one update, and keeps its writes. */
	decide<T>(item: ItemKeys, decide: (values: StagedValues) => T, now = NOW): T {
		const keys = [item.sendKey, item.messageKey, ...item.countKeys];
		const staged = new StagedValues(
			keys,
			keys.map((key) => this.values.get(key)),
			now,
		);
		const result = decide(staged);
		for (const write of staged.writes()) {
			if (write.value === null) this.values.delete(write.key);
			else this.values.set(write.key, write.value);
			if (write.value !== null) this.ttls.set(write.key, write.ttlMs ?? 0);
			if (write.value !== null) this.expiresAt.set(write.key, now + (write.ttlMs ?? 0));
		}
		return result;
	}

	/** The item reserved and claimed by `run`: a send about to be paid for. */
	reserveAndClaim(item: ItemKeys, run: RunIdentity): void {
		this.decide(item, (values) => decideReserve(values, run, item));
		this.decide(item, (values) => decideClaim(values, run, item));
	}

	json(key: string) {
		const value = this.values.get(key);
		return value === undefined ? undefined : (JSON.parse(value) as Record<string, unknown>);
	}

	counts(item: ItemKeys) {
		return item.countKeys.map((key) => Number(this.values.get(key) ?? 0));
	}
}


/** A store that holds `item` reserved and claimed by `run`: where the release and mark tests start. */
function claimedSend(item = itemOf('e1'), run = runOf('e1')) {
	const store = new Contents();
	store.reserveAndClaim(item, run);
	return { store, item, run };
}
describe('what a send writes, and for how long', () => {
	it('a reservation keeps its message a day (to be taken over after a crash); once started, for the repeat window', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		expect(store.decide(item, (values) => decideReserve(values, run, item))).toEqual({ kind: 'send' });
		expect(store.ttls.get(item.messageKey)).toBe(24 * 60 * MINUTE);
		expect(store.ttls.get(item.sendKey)).toBe(24 * 60 * MINUTE);
		expect(store.json(item.sendKey)).toEqual({ state: 'reserved', token: run.token, counted: tagsOf(item.countKeys) });
		expect(store.json(item.messageKey)).toEqual({ execution: 'e1', holders: { [item.sendKey]: { state: 'reserved', counted: tagsOf(item.countKeys), token: run.token, execution: 'e1' } } });
		expect(store.counts(item)).toEqual([1, 1, 1]);
		// The minute's count lasts until its minute ends, and a minute more for a late release.
		expect(store.ttls.get(item.countKeys[0])).toBe(MINUTE - 30_000 + MINUTE);

		expect(store.decide(item, (values) => decideClaim(values, run, item), NOW + 5)).toBe('go');
		expect(store.ttls.get(item.messageKey)).toBe(10 * MINUTE);
		expect(store.json(item.sendKey)).toEqual({ state: 'unknown', token: run.token, counted: tagsOf(item.countKeys) });
		expect((store.json(item.messageKey)?.holders as Record<string, unknown>)[item.sendKey]).toMatchObject({ state: 'unknown', at: NOW + 5 });

		store.decide(item, (values) => decideSent(values, run, item, 'task-1'), NOW + 9);
		expect(store.json(item.sendKey)).toEqual({ state: 'sent', token: run.token, counted: tagsOf(item.countKeys), taskId: 'task-1' });
		expect((store.json(item.messageKey)?.holders as Record<string, unknown>)[item.sendKey]).toMatchObject({ state: 'sent', at: NOW + 9 });
		expect(store.counts(item)).toEqual([1, 1, 1]);
	});

	it('with a repeat window of 0 a message lasts as long as a send record', () => {
		const { store, item } = claimedSend(itemOf('e1'), runOf('e1', 0));
		expect(store.ttls.get(item.messageKey)).toBe(24 * 60 * MINUTE);
	});
});

describe('another execution, by what its send of the message reached', () => {
	it('started within the window is a repeat up to its last millisecond; after it, this execution sends', () => {
		const store = new Contents();
		const first = itemOf('e1');
		const firstRun = runOf('e1');
		store.decide(first, (values) => decideReserve(values, firstRun, first));
		store.decide(first, (values) => decideClaim(values, firstRun, first));
		const second = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		const secondRun = runOf('e2');
		expect(store.decide(second, (values) => decideReserve(values, secondRun, second), NOW + 10 * MINUTE - 1)).toEqual({ kind: 'repeat' });
		expect(store.decide(second, (values) => decideReserve(values, secondRun, second), NOW + 10 * MINUTE)).toEqual({ kind: 'send' });
		// The other execution's started send keeps its place (its outcome is unknown), beside this one.
		expect(Object.keys(store.json(second.messageKey)?.holders as object).sort()).toEqual([first.sendKey, second.sendKey].sort());
	});

	it("sent, past the window: dropped from the message when this execution takes it, its counts kept", () => {
		const store = new Contents();
		const first = itemOf('e1', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		const firstRun = runOf('e1');
		store.decide(first, (values) => decideReserve(values, firstRun, first));
		store.decide(first, (values) => decideClaim(values, firstRun, first));
		store.decide(first, (values) => decideSent(values, firstRun, first, null));
		const second = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		const secondRun = runOf('e2');
		expect(store.decide(second, (values) => decideReserve(values, secondRun, second), NOW + 10 * MINUTE)).toEqual({ kind: 'send' });
		expect(Object.keys(store.json(second.messageKey)?.holders as object)).toEqual([second.sendKey]);
		expect(store.counts(second)).toEqual([2, 2, 2]);
	});

	it('a started send without its time (an older record) is a repeat, whatever the time', () => {
		const store = new Contents();
		const item = itemOf('e2');
		const key = itemOf('e1').sendKey;
		store.values.set(item.messageKey, JSON.stringify({ execution: 'e1', holders: { [key]: { state: 'unknown', counted: [] } } }));
		expect(store.decide(item, (values) => decideReserve(values, runOf('e2'), item), NOW + 1000 * MINUTE)).toEqual({ kind: 'repeat' });
	});

	it('only reserved: taken over with its counts given back; its run can then neither claim nor mark it sent', () => {
		const store = new Contents();
		const first = itemOf('e1');
		const firstRun = runOf('e1');
		store.decide(first, (values) => decideReserve(values, firstRun, first));
		const second = itemOf('e2');
		const secondRun = runOf('e2');
		expect(store.decide(second, (values) => decideReserve(values, secondRun, second))).toEqual({ kind: 'send' });
		expect(store.counts(second)).toEqual([1, 1, 1]);
		expect(store.decide(second, (values) => decideClaim(values, secondRun, second))).toBe('go');
		// The first run's claim finds the message started elsewhere: it gives its own record up.
		expect(store.decide(first, (values) => decideClaim(values, firstRun, first))).toBe('taken');
		expect(store.values.has(first.sendKey)).toBe(false);
		// Its release and mark change nothing of the second run's.
		const before = new Map(store.values);
		store.decide(first, (values) => decideRelease(values, firstRun, first));
		store.decide(first, (values) => decideSent(values, firstRun, first, 'task-x'));
		expect(store.values).toEqual(before);
	});
});

describe('a release', () => {
	it('gives back the counts and the message of a send that certainly failed, and changes nothing when run again', () => {
		const { store, item, run } = claimedSend();
		store.decide(item, (values) => decideRelease(values, run, item));
		expect([...store.values.keys()]).toEqual([]);
		store.decide(item, (values) => decideRelease(values, run, item));
		expect([...store.values.keys()]).toEqual([]);
	});

	it("of another run's record of this very item changes nothing", () => {
		const store = new Contents();
		const item = itemOf('e1');
		store.decide(item, (values) => decideReserve(values, runOf('e1'), item));
		const before = new Map(store.values);
		store.decide(item, (values) => decideRelease(values, runOf('e1', 10 * MINUTE, 'another token'), item));
		expect(store.values).toEqual(before);
	});

	it('whose send record is gone finds its send in the message and gives its counts back', () => {
		const { store, item, run } = claimedSend();
		store.values.delete(item.sendKey);
		store.decide(item, (values) => decideRelease(values, run, item));
		expect([...store.values.keys()]).toEqual([]);
	});
});

describe('marking sent', () => {
	it('whose send record is gone writes it again from the message, as sent', () => {
		const { store, item, run } = claimedSend();
		store.values.delete(item.sendKey);
		store.decide(item, (values) => decideSent(values, run, item, 'task-2'));
		expect(store.json(item.sendKey)).toEqual({ state: 'sent', token: run.token, counted: tagsOf(item.countKeys), taskId: 'task-2' });
	});

	it('of a send only reserved changes nothing (it was never claimed)', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		const before = new Map(store.values);
		store.decide(item, (values) => decideSent(values, run, item, 'task-3'));
		expect(store.values).toEqual(before);
	});
});

/** Holders of the item's message, by send key. */
const holdersOf = (store: Contents, item: ItemKeys) => (store.json(item.messageKey)?.holders ?? {}) as Record<string, Record<string, unknown>>;

describe('another try of this very item (same execution, run and item: Retry On Fail) after its run stopped', () => {
	it("whose send was only reserved: the new try reserves it, its count not counted twice (the limit of 1 a minute lets it through)", () => {
		const store = new Contents();
		const item = itemOf('e1');
		store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 1'), item));
		const second = runOf('e1', 10 * MINUTE, 'try 2');
		expect(store.decide(item, (values) => decideReserve(values, second, item))).toEqual({ kind: 'send' });
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(store.json(item.sendKey)).toMatchObject({ state: 'reserved', token: 'try 2' });
		expect(Object.keys(holdersOf(store, item))).toEqual([item.sendKey]);
		expect(holdersOf(store, item)[item.sendKey]).toMatchObject({ token: 'try 2', state: 'reserved' });
	});

	it('whose message record is gone: its counts are not given back (only a take-over ends a reservation\'s message before its record, and it gave them back; issue 41 item 4)', () => {
		const store = new Contents();
		const item = itemOf('e1', 0, { perMinute: 2, perHour: 5, perDay: 10 });
		store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 1'), item));
		store.values.delete(item.messageKey);
		expect(store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 2'), item))).toEqual({ kind: 'send' });
		expect(store.counts(item)).toEqual([2, 2, 2]);
		expect(store.json(item.sendKey)).toMatchObject({ state: 'reserved', token: 'try 2' });
	});

	it('whose reservation another execution took over and sent, the message record expired since: a new try is refused by the limit, the taker\'s send counted once (issue 41 item 4)', () => {
		const store = new Contents();
		const item = itemOf('e1');
		store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 1'), item));
		const taker = itemOf('e2');
		const takerRun = runOf('e2');
		store.reserveAndClaim(taker, takerRun);
		store.decide(taker, (values) => decideSent(values, takerRun, taker, 'task 2'));
		store.values.delete(item.messageKey);
		expect(store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 2'), item), NOW + 11 * MINUTE)).toMatchObject({ kind: 'limit' });
		expect(store.counts(item)).toEqual([1, 1, 1]);
	});

	it('that claims it when the first try only reserved it: the claim takes it back and goes, counted once', () => {
		const store = new Contents();
		const item = itemOf('e1');
		store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 1'), item));
		const second = runOf('e1', 10 * MINUTE, 'try 2');
		expect(store.decide(item, (values) => decideClaim(values, second, item), NOW + 7)).toBe('go');
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(store.json(item.sendKey)).toEqual({ state: 'unknown', token: 'try 2', counted: tagsOf(item.countKeys) });
		expect(holdersOf(store, item)).toEqual({ [item.sendKey]: { state: 'unknown', counted: tagsOf(item.countKeys), token: 'try 2', execution: 'e1', at: NOW + 7 } });
		expect(store.ttls.get(item.messageKey)).toBe(10 * MINUTE);
	});

	it('that claims it when the first try started it: taken (the first try sends it), nothing changed', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const first = runOf('e1', 10 * MINUTE, 'try 1');
		store.decide(item, (values) => decideReserve(values, first, item));
		store.decide(item, (values) => decideClaim(values, first, item));
		const before = new Map(store.values);
		expect(store.decide(item, (values) => decideClaim(values, runOf('e1', 10 * MINUTE, 'try 2'), item))).toBe('taken');
		expect(store.values).toEqual(before);
	});

	it('hands back what the first try sent or left unknown, with its task ID', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const first = runOf('e1', 10 * MINUTE, 'try 1');
		store.decide(item, (values) => decideReserve(values, first, item));
		store.decide(item, (values) => decideClaim(values, first, item));
		expect(store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 2'), item))).toEqual({ kind: 'earlier', outcome: 'unknown', taskId: undefined });
		store.decide(item, (values) => decideSent(values, first, item, 'task-9'));
		expect(store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 3'), item))).toEqual({ kind: 'earlier', outcome: 'sent', taskId: 'task-9' });
		// The same try reserving again (its update's answer was lost) finds its own reservation.
		const fourth = runOf('e1', 10 * MINUTE, 'try 4');
		const other = itemOf('e1', 1, { perMinute: 9, perHour: 9, perDay: 9 });
		store.decide(other, (values) => decideReserve(values, fourth, other));
		const before = new Map(store.values);
		expect(store.decide(other, (values) => decideReserve(values, fourth, other))).toEqual({ kind: 'send' });
		expect(store.values).toEqual(before);
	});
});

describe('a claim whose records are gone (evicted, or lost with a Redis restart)', () => {
	it('finds its reservation in the message and writes its send record again, counted once', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.values.delete(item.sendKey);
		expect(store.decide(item, (values) => decideClaim(values, run, item), NOW + 3)).toBe('go');
		expect(store.json(item.sendKey)).toEqual({ state: 'unknown', token: run.token, counted: tagsOf(item.countKeys) });
		expect(holdersOf(store, item)[item.sendKey]).toMatchObject({ state: 'unknown', at: NOW + 3 });
		expect(store.counts(item)).toEqual([1, 1, 1]);
	});

	it('with nothing left, decides anew as a reserve does: it takes the counts and goes', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.values.clear();
		expect(store.decide(item, (values) => decideClaim(values, run, item), NOW + 3)).toBe('go');
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(store.json(item.sendKey)).toEqual({ state: 'unknown', token: run.token, counted: tagsOf(item.countKeys) });
		expect(holdersOf(store, item)).toEqual({ [item.sendKey]: { state: 'unknown', counted: tagsOf(item.countKeys), token: run.token, execution: 'e1', at: NOW + 3 } });
		expect(store.ttls.get(item.messageKey)).toBe(10 * MINUTE);
	});

	it('with nothing left but the counts, and the limit reached by another message, is refused with the limit', () => {
		const store = new Contents();
		const item = itemOf('e1');
		store.values.set(item.countKeys[0], '1');
		expect(store.decide(item, (values) => decideClaim(values, runOf('e1'), item))).toEqual({ limit: `would be message 2 to ${PHONE} in this calendar minute; this node allows 1` });
		expect(store.values.has(item.sendKey)).toBe(false);
		expect(store.values.has(item.messageKey)).toBe(false);
	});

	it('whose reservation another execution took over, and whose number has since reached its limit, is refused and drops its record', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		// Another execution (its node allowing more) took the reservation over, and a third sent another message to the number.
		const taker = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		store.decide(taker, (values) => decideReserve(values, runOf('e2'), taker));
		store.values.set(item.countKeys[0], '2');
		expect(store.decide(item, (values) => decideClaim(values, run, item))).toEqual({ limit: `would be message 2 to ${PHONE} in this calendar minute; this node allows 1` });
		expect(store.values.has(item.sendKey)).toBe(false);
	});

	it("whose reservation another execution took over but did not start: takes it back, so the first claim wins", () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		const taker = itemOf('e2');
		const takerRun = runOf('e2');
		store.decide(taker, (values) => decideReserve(values, takerRun, taker));
		expect(store.decide(item, (values) => decideClaim(values, run, item))).toBe('go');
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(Object.keys(holdersOf(store, item))).toEqual([item.sendKey]);
		// The other execution's claim now finds the message started: it does not send it too.
		expect(store.decide(taker, (values) => decideClaim(values, takerRun, taker))).toBe('taken');
		expect(store.values.has(taker.sendKey)).toBe(false);
		expect(store.counts(item)).toEqual([1, 1, 1]);
	});
});

describe('a release whose records changed meanwhile', () => {
	it('of a started send whose message record has expired (past the repeat window) gives back the counts its send record lists', () => {
		const { store, item, run } = claimedSend();
		store.values.delete(item.messageKey);
		store.decide(item, (values) => decideRelease(values, run, item));
		expect([...store.values.keys()]).toEqual([]);
	});

	it('of a started send whose message expired and was written again by another execution gives back its own counts, and leaves the other\'s', () => {
		const limits = { perMinute: 2, perHour: 5, perDay: 10 };
		const { store, item, run } = claimedSend(itemOf('e1', 0, limits));
		store.values.delete(item.messageKey);
		const other = itemOf('e2', 0, limits);
		store.decide(other, (values) => decideReserve(values, runOf('e2'), other), NOW + 11 * MINUTE);
		expect(store.counts(item)).toEqual([2, 2, 2]);
		store.decide(item, (values) => decideRelease(values, run, item), NOW + 11 * MINUTE);
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(Object.keys(holdersOf(store, item))).toEqual([other.sendKey]);
	});

	it("of a reservation whose message record is gone keeps the counts: a take-over gave them back before the message expired (issue 41 item 4)", () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.values.delete(item.messageKey);
		store.decide(item, (values) => decideRelease(values, run, item));
		expect(store.values.has(item.sendKey)).toBe(false);
		expect(store.counts(item)).toEqual([1, 1, 1]);
	});

	it('whose reservation another execution took over keeps the counts (the taker gave them back and took its own)', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		const taker = itemOf('e2');
		store.decide(taker, (values) => decideReserve(values, runOf('e2'), taker));
		store.decide(item, (values) => decideRelease(values, run, item));
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(store.values.has(item.sendKey)).toBe(false);
		expect(Object.keys(holdersOf(store, item))).toEqual([taker.sendKey]);
	});

	it('whose send record is gone and whose message is unreadable changes nothing, and does not fail', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.values.delete(item.sendKey);
		store.values.set(item.messageKey, 'not json');
		const before = new Map(store.values);
		store.decide(item, (values) => decideRelease(values, run, item));
		store.decide(item, (values) => decideSent(values, run, item, 'task-4'));
		expect(store.values).toEqual(before);
	});

	it("whose send record is gone and whose message holds another run's send of it changes nothing", () => {
		const store = new Contents();
		const item = itemOf('e1');
		store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 1'), item));
		store.values.delete(item.sendKey);
		const before = new Map(store.values);
		store.decide(item, (values) => decideRelease(values, runOf('e1', 10 * MINUTE, 'try 2'), item));
		store.decide(item, (values) => decideSent(values, runOf('e1', 10 * MINUTE, 'try 2'), item, 'task-5'));
		expect(store.values).toEqual(before);
	});
});

describe('marking sent, with records changed meanwhile', () => {
	it('whose message record is gone marks the send record sent and leaves the message gone', () => {
		const { store, item, run } = claimedSend();
		store.values.delete(item.messageKey);
		store.decide(item, (values) => decideSent(values, run, item, 'task-6'));
		expect(store.json(item.sendKey)).toEqual({ state: 'sent', token: run.token, counted: tagsOf(item.countKeys), taskId: 'task-6' });
		expect(store.values.has(item.messageKey)).toBe(false);
	});

	it("of another run's record, or one already sent, changes nothing", () => {
		const { store, item, run } = claimedSend();
		const before = new Map(store.values);
		store.decide(item, (values) => decideSent(values, runOf('e1', 10 * MINUTE, 'another token'), item, 'task-7'));
		expect(store.values).toEqual(before);
		store.decide(item, (values) => decideSent(values, run, item, 'task-8'));
		const sent = new Map(store.values);
		store.decide(item, (values) => decideSent(values, run, item, 'task-9'), NOW + 5);
		expect(store.values).toEqual(sent);
		expect(store.json(item.sendKey)).toMatchObject({ taskId: 'task-8' });
	});

	it('with a repeat window of 0 keeps the message, as sent, as long as a send record', () => {
		const { store, item, run } = claimedSend(itemOf('e1'), runOf('e1', 0));
		store.decide(item, (values) => decideSent(values, run, item, null), NOW + 9);
		expect(holdersOf(store, item)[item.sendKey]).toMatchObject({ state: 'sent', at: NOW + 9 });
		expect(store.ttls.get(item.messageKey)).toBe(24 * 60 * MINUTE);
		// A window of 0 makes nothing a repeat.
		const next = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		expect(store.decide(next, (values) => decideReserve(values, runOf('e2', 0), next), NOW + 10)).toEqual({ kind: 'send' });
	});
});

describe("a message's record", () => {
	it('lasts a day while any send of it is only reserved, though another was started', () => {
		const store = new Contents();
		const first = itemOf('e1', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		const firstRun = runOf('e1');
		store.decide(first, (values) => decideReserve(values, firstRun, first));
		store.decide(first, (values) => decideClaim(values, firstRun, first));
		const second = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		store.decide(second, (values) => decideReserve(values, runOf('e2'), second), NOW + 10 * MINUTE);
		expect(Object.keys(holdersOf(store, second)).sort()).toEqual([first.sendKey, second.sendKey].sort());
		expect(store.ttls.get(second.messageKey)).toBe(24 * 60 * MINUTE);
	});

	it('written before holders named their execution and token: a holder is of the execution the message names, its token that of its send record', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		const counted = tagsOf(item.countKeys);
		// An older record: the reservation of e1, without token and execution on its holder.
		store.values.set(item.sendKey, JSON.stringify({ state: 'reserved', token: run.token, counted }));
		store.values.set(item.messageKey, JSON.stringify({ execution: 'e1', holders: { [item.sendKey]: { state: 'reserved', counted } } }));
		item.countKeys.forEach((key) => store.values.set(key, '1'));
		// Its own claim goes (not refused by its own count of 1 a minute).
		expect(store.decide(item, (values) => decideClaim(values, run, item))).toBe('go');
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(holdersOf(store, item)[item.sendKey]).toMatchObject({ state: 'unknown' });
		// Another run of the node in the same execution is not a repeat of it; another execution's is.
		const sameExecution = itemOf('e1', 1, { perMinute: 9, perHour: 9, perDay: 9 });
		const olderHolder = { [item.sendKey]: { state: 'unknown', counted, at: NOW } };
		store.values.set(item.messageKey, JSON.stringify({ execution: 'e1', holders: olderHolder }));
		expect(store.decide(sameExecution, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'run 2'), sameExecution))).toEqual({ kind: 'send' });
		store.values.set(item.messageKey, JSON.stringify({ execution: 'e1', holders: olderHolder }));
		const other = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		expect(store.decide(other, (values) => decideReserve(values, runOf('e2'), other))).toEqual({ kind: 'repeat' });
	});
});

describe('counts given back once (found by the mutation run)', () => {
	/**
	 * Another try of this very item finds the first try's reservation, which another execution took
	 * over (giving its counts back then) and started: the counts must not be given back a second time.
	 */
	function takenOverThenRetried() {
		const store = new Contents();
		const item = itemOf('e1');
		store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 1'), item));
		const taker = itemOf('e2');
		const takerRun = runOf('e2');
		store.decide(taker, (values) => decideReserve(values, takerRun, taker));
		store.decide(taker, (values) => decideClaim(values, takerRun, taker));
		expect(store.counts(item)).toEqual([1, 1, 1]);
		return { store, item };
	}

	it("another try's reserve of a reservation another execution took over and started: a repeat, the other execution's send still counted", () => {
		const { store, item } = takenOverThenRetried();
		expect(store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 2'), item))).toEqual({ kind: 'repeat' });
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(store.values.has(item.sendKey)).toBe(false);
	});

	it("another try's claim of a reservation another execution took over and started: taken, the other execution's send still counted", () => {
		const { store, item } = takenOverThenRetried();
		expect(store.decide(item, (values) => decideClaim(values, runOf('e1', 10 * MINUTE, 'try 2'), item))).toBe('taken');
		expect(store.counts(item)).toEqual([1, 1, 1]);
		expect(store.values.has(item.sendKey)).toBe(false);
	});
});

describe('a decision run again (its update\'s answer was lost) changes nothing', () => {
	it('a reserve, even once another execution took the reservation over: that execution keeps it', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		const taker = itemOf('e2');
		store.decide(taker, (values) => decideReserve(values, runOf('e2'), taker));
		const before = new Map(store.values);
		expect(store.decide(item, (values) => decideReserve(values, run, item), NOW + 5)).toEqual({ kind: 'send' });
		expect(store.values).toEqual(before);
	});

	it('a claim: the repeat window still counts from the first', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.decide(item, (values) => decideClaim(values, run, item), NOW + 5);
		const before = new Map(store.values);
		expect(store.decide(item, (values) => decideClaim(values, run, item), NOW + 60_000)).toBe('go');
		expect(store.values).toEqual(before);
		expect(holdersOf(store, item)[item.sendKey]).toMatchObject({ at: NOW + 5 });
	});

	it('a reserve after this run started or sent the item hands it back, never sends it again', () => {
		const { store, item, run } = claimedSend();
		expect(store.decide(item, (values) => decideReserve(values, run, item))).toEqual({ kind: 'earlier', outcome: 'unknown', taskId: undefined });
		store.decide(item, (values) => decideSent(values, run, item, 'task-1'));
		expect(store.decide(item, (values) => decideReserve(values, run, item))).toEqual({ kind: 'earlier', outcome: 'sent', taskId: 'task-1' });
		// Its claim again goes on as claimed, and leaves the send as sent.
		const sent = new Map(store.values);
		expect(store.decide(item, (values) => decideClaim(values, run, item))).toBe('go');
		expect(store.values).toEqual(sent);
	});
});

describe('records changed under a decision, further', () => {
	it("a retry refused by the limit leaves no trace of the first try's reservation, so that no one gives its counts back again", () => {
		const store = new Contents();
		const item = itemOf('e1', 0, { perMinute: 2, perHour: 9, perDay: 9 });
		store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 1'), item));
		// Two other messages to the number this minute, from other executions.
		store.values.set(item.countKeys[0], '3');
		expect(store.decide(item, (values) => decideReserve(values, runOf('e1', 10 * MINUTE, 'try 2'), item))).toMatchObject({ kind: 'limit' });
		expect(store.values.has(item.sendKey)).toBe(false);
		expect(store.values.has(item.messageKey)).toBe(false);
		expect(store.counts(item)[0]).toBe(2);
		// Another execution sending the message now counts it on top of the two.
		const other = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		expect(store.decide(other, (values) => decideReserve(values, runOf('e2'), other))).toEqual({ kind: 'send' });
		expect(store.counts(other)[0]).toBe(3);
	});

	it("an execution refused by the limit after taking over another's reservation leaves that reservation gone: its claim decides anew, counted", () => {
		const store = new Contents();
		const first = itemOf('e1', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		const firstRun = runOf('e1');
		store.decide(first, (values) => decideReserve(values, firstRun, first));
		// Another message to the number from a third execution; the second execution's node allows 1 a minute.
		store.values.set(first.countKeys[0], '2');
		const second = itemOf('e2', 0, { perMinute: 1, perHour: 9, perDay: 9 });
		expect(store.decide(second, (values) => decideReserve(values, runOf('e2'), second))).toMatchObject({ kind: 'limit' });
		expect(store.values.has(first.messageKey)).toBe(false);
		expect(store.counts(first)[0]).toBe(1);
		expect(store.decide(first, (values) => decideClaim(values, firstRun, first))).toBe('go');
		expect(store.counts(first)[0]).toBe(2);
	});

	it("a release of a send another execution took over leaves that execution's message as it was, expiry included", () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		const taker = itemOf('e2');
		const takerRun = runOf('e2');
		store.decide(taker, (values) => decideReserve(values, takerRun, taker));
		store.decide(taker, (values) => decideClaim(values, takerRun, taker));
		const expires = store.expiresAt.get(item.messageKey);
		store.decide(item, (values) => decideRelease(values, run, item), NOW + 5 * MINUTE);
		expect(store.expiresAt.get(item.messageKey)).toBe(expires);
		expect(Object.keys(holdersOf(store, item))).toEqual([taker.sendKey]);
	});

	it('a mark of a send whose message was written again without it (evicted, then another execution reserved) marks the send record only', () => {
		const { store, item, run } = claimedSend(itemOf('e1', 0, { perMinute: 9, perHour: 9, perDay: 9 }));
		store.values.delete(item.messageKey);
		const other = itemOf('e2', 0, { perMinute: 9, perHour: 9, perDay: 9 });
		store.decide(other, (values) => decideReserve(values, runOf('e2'), other));
		const message = store.values.get(item.messageKey);
		store.decide(item, (values) => decideSent(values, run, item, 'task-3'));
		expect(store.json(item.sendKey)).toMatchObject({ state: 'sent', taskId: 'task-3' });
		expect(store.values.get(item.messageKey)).toBe(message);
	});

	it('a holder written before holders named their token, whose send record is gone, is not taken for this run\'s: release and mark change nothing', () => {
		const store = new Contents();
		const item = itemOf('e1');
		store.values.set(item.messageKey, JSON.stringify({ execution: 'e1', holders: { [item.sendKey]: { state: 'unknown', counted: tagsOf(item.countKeys), at: NOW } } }));
		item.countKeys.forEach((key) => store.values.set(key, '1'));
		const before = new Map(store.values);
		store.decide(item, (values) => decideRelease(values, runOf('e1'), item));
		store.decide(item, (values) => decideSent(values, runOf('e1'), item, 'task-4'));
		expect(store.values).toEqual(before);
	});

	it("a claim's first try names no counts: dropping another try's reservation asks for them first, so that they are given back", () => {
		const item = itemOf('e1');
		const counted = tagsOf(item.countKeys);
		const started = itemOf('e2').sendKey;
		const message = JSON.stringify({ execution: 'e1', holders: { [started]: { state: 'unknown', counted: [], execution: 'e2', at: NOW }, [item.sendKey]: { state: 'reserved', counted, token: 'try 1', execution: 'e1' } } });
		const send = JSON.stringify({ state: 'reserved', token: 'try 1', counted });
		const run = runOf('e1', 10 * MINUTE, 'try 2');
		const withoutCounts = new StagedValues([item.sendKey, item.messageKey], [send, message], NOW);
		expect(() => decideClaim(withoutCounts, run, item)).toThrow(UnnamedKey);
		const store = new Contents();
		store.values.set(item.sendKey, send);
		store.values.set(item.messageKey, message);
		item.countKeys.forEach((key) => store.values.set(key, '2'));
		expect(store.decide(item, (values) => decideClaim(values, run, item))).toBe('taken');
		expect(store.counts(item)).toEqual([1, 1, 1]);
	});
});

describe('a repeat window of 0', () => {
	it("makes nothing a repeat, not even another execution's started send of an older record (without its time)", () => {
		const store = new Contents();
		const item = itemOf('e2');
		const key = itemOf('e1').sendKey;
		store.values.set(item.messageKey, JSON.stringify({ execution: 'e1', holders: { [key]: { state: 'unknown', counted: [] } } }));
		expect(store.decide(item, (values) => decideReserve(values, runOf('e2', 0), item))).toEqual({ kind: 'send' });
	});
});
