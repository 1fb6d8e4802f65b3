/**
 * The per-message decision of SMS Send (send/leaving.ts) on staged values: an opt-out entry keeps a
 * message from leaving whatever its value, the Send Window is read at the store's time, the gate
 * reads the number's entries under every scope of the account, and the words and fields of an item
 * that was not sent. Through the engine: test/sms/leaving.test.ts.
 */
import { leavingGate, notLeaving, notLeavingFields, notLeavingText, skipsNotLeaving } from '../../nodes/DataGatewaySms/actions/message/send/leaving';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { optOutKeysOf } from '../../nodes/shared/store/optOutList';
import type { GuardScope } from '../../nodes/shared/store/guardScope';

const chinaTime = (iso: string) => Date.parse(`${iso}+08:00`);
const daytime = { startMinute: 8 * 60, endMinute: 21 * 60 };

describe('whether a message may leave', () => {
	it('stops a number with an opt-out entry: a time written by Opt-Out > Add is "opted out", anything else "unreadable"', () => {
		expect(notLeaving('1764000000000', chinaTime('2026-11-27T12:00:00'), daytime)).toEqual({ reason: 'opted-out' });
		expect(notLeaving('0', 0, undefined)).toEqual({ reason: 'opted-out' });
		for (const entry of ['', '  ', 'yes', '{"at":1}', 'NaN']) expect(notLeaving(entry, 0, undefined)).toEqual({ reason: 'opt-out-unreadable' });
	});

	it('lets a number without an entry leave inside the window or without one, and stops it outside, saying when it opens', () => {
		expect(notLeaving(undefined, chinaTime('2026-11-27T03:00:00'), undefined)).toBeUndefined();
		expect(notLeaving(undefined, chinaTime('2026-11-27T08:00:00'), daytime)).toBeUndefined();
		expect(notLeaving(undefined, chinaTime('2026-11-27T20:59:59'), daytime)).toBeUndefined();
		const late = notLeaving(undefined, chinaTime('2026-11-27T21:00:00'), daytime);
		expect(late).toEqual({ reason: 'outside-window', window: daytime, check: { inside: false, opensAtMs: chinaTime('2026-11-28T08:00:00'), opensAt: '2026-11-28T08:00:00+08:00' } });
		// An opt-out entry is decided first, in the window or out of it.
		expect(notLeaving('1764000000000', chinaTime('2026-11-27T23:00:00'), daytime)).toEqual({ reason: 'opted-out' });
	});

	it('skips such a message from SMS 1.5; earlier versions keep the error', () => {
		expect([1, 1.4, 1.5, 1.6].map((typeVersion) => skipsNotLeaving({ typeVersion }))).toEqual([false, false, true, true]);
	});
});

describe("the decision in the claim's store update (leavingGate)", () => {
	const guard: GuardScope = { store: new MemoryStore(), earlier: [], scope: 'account:now', former: ['gateway:before'] };
	const phone = '13900001111';

	it("reads the number's keys under every scope of the account, and stops on any of them", () => {
		const gate = leavingGate(guard, phone, undefined);
		expect(gate.keys).toEqual(optOutKeysOf(guard, phone));
		expect(gate.keys).toHaveLength(2);
		const noon = chinaTime('2026-11-27T12:00:00');
		expect(gate.stop(() => undefined, noon)).toBeUndefined();
		expect(gate.stop((key) => (key === gate.keys[1] ? '1764000000000' : undefined), noon)).toEqual({ reason: 'opted-out' });
		expect(gate.stop((key) => (key === gate.keys[0] ? 'garbled' : undefined), noon)).toEqual({ reason: 'opt-out-unreadable' });
		// The first scope's entry decides when both hold one.
		expect(gate.stop((key) => (key === gate.keys[0] ? '1764000000000' : 'garbled'), noon)).toEqual({ reason: 'opted-out' });
	});

	it("decides the window at the store's time, as the message leaves", () => {
		const gate = leavingGate(guard, phone, daytime);
		expect(gate.stop(() => undefined, chinaTime('2026-11-27T20:59:59'))).toBeUndefined();
		expect(gate.stop(() => undefined, chinaTime('2026-11-27T21:00:00'))).toMatchObject({ reason: 'outside-window' });
	});
});

describe('an item that was not sent', () => {
	it('says the number is on the opt-out list, and how Send would treat it in Preview', () => {
		expect(notLeavingFields({ reason: 'opted-out' })).toEqual({
			sent: false,
			notSentBecause: "the number is on this account's opt-out list (Opt-Out > Remove takes it off if the person asks for messages again)",
			optedOut: true,
		});
		expect(notLeavingText({ reason: 'opted-out' }, true)).toBe("the number is on this account's opt-out list: Send would skip it");
		expect(notLeavingFields({ reason: 'opted-out' }, true).notSentBecause).toBe("the number is on this account's opt-out list: Send would skip it");
	});

	it('says the window closed, when it opens, and carries the window fields', () => {
		const why = notLeaving(undefined, chinaTime('2026-11-27T22:30:00'), daytime);
		if (why?.reason !== 'outside-window') throw new Error('expected outside the window');
		expect(notLeavingFields(why)).toEqual({
			sent: false,
			notSentBecause: 'the send window 08:00–21:00 China time closed before this message left; it opens at 2026-11-28T08:00:00+08:00',
			outsideSendWindow: true,
			sendWindow: '08:00–21:00',
			opensAt: '2026-11-28T08:00:00+08:00',
			opensAtMs: chinaTime('2026-11-28T08:00:00'),
		});
	});
});
