/**
 * The send-record decisions (store/sendRecords/decisions.ts) on staged values, without a store:
 * what each writes and for how long. test/unit/sms-records.test.ts runs them through the records on a
 * store; test/sms/records-faults.test.ts under faults.
 */
import { decideClaim, decideRelease, decideReserve, decideSent, type ItemKeys, type RunIdentity } from '../../nodes/shared/store/sendRecords/decisions';
import { countKeyOf, messageKeyOf, sendKeyOf, StagedValues } from '../../nodes/shared/store/sendRecords/recordValues';
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
		}
		return result;
	}

	json(key: string) {
		const value = this.values.get(key);
		return value === undefined ? undefined : (JSON.parse(value) as Record<string, unknown>);
	}

	counts(item: ItemKeys) {
		return item.countKeys.map((key) => Number(this.values.get(key) ?? 0));
	}
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
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1', 0);
		store.decide(item, (values) => decideReserve(values, run, item));
		store.decide(item, (values) => decideClaim(values, run, item));
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
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.decide(item, (values) => decideClaim(values, run, item));
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
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.decide(item, (values) => decideClaim(values, run, item));
		store.values.delete(item.sendKey);
		store.decide(item, (values) => decideRelease(values, run, item));
		expect([...store.values.keys()]).toEqual([]);
	});
});

describe('marking sent', () => {
	it('whose send record is gone writes it again from the message, as sent', () => {
		const store = new Contents();
		const item = itemOf('e1');
		const run = runOf('e1');
		store.decide(item, (values) => decideReserve(values, run, item));
		store.decide(item, (values) => decideClaim(values, run, item));
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
