/**
 * The rules the send records apply (store/sendRecords/rules.ts): which messages are the same, the
 * calendar windows a send counts in, and the words of a refusal. test/unit/sms-records.test.ts runs
 * them through the records.
 */
import { changeFingerprint, countWindows, limitProblem, messageFingerprint } from '../../nodes/shared/store/sendRecords/rules';

const message = { account: 'account-hash', phone: '13900000001', signId: 7, templateId: 9, params: { code: '1234', name: 'Li' } };

describe('the same message, the same change', () => {
	it('one fingerprint for one message, whatever the order of its parameters; none of the number in it', () => {
		const print = messageFingerprint(message);
		expect(print).toMatch(/^[0-9a-f]{32}$/);
		expect(messageFingerprint({ ...message, params: { name: 'Li', code: '1234' } })).toBe(print);
		expect(print).not.toContain('13900000001');
	});

	it('one fingerprint for a message of four parameters given in any of their 24 orders', () => {
		const entries = Object.entries({ code: '1234', name: 'Li', shop: 'East', day: 'Monday' });
		const orders = (list: Array<[string, string]>): Array<Array<[string, string]>> =>
			list.length <= 1 ? [list] : list.flatMap((entry, index) => orders([...list.slice(0, index), ...list.slice(index + 1)]).map((rest) => [entry, ...rest]));
		const prints = new Set(orders(entries).map((order) => messageFingerprint({ ...message, params: Object.fromEntries(order) })));
		expect(prints.size).toBe(1);
		expect(changeFingerprint('account', 'templateCreate', Object.fromEntries([...entries].reverse()))).toBe(changeFingerprint('account', 'templateCreate', Object.fromEntries(entries)));
		// Names and values stay paired: two values swapped between names is another message.
		expect(messageFingerprint({ ...message, params: { code: 'Li', name: '1234' } })).not.toBe(messageFingerprint(message));
	});

	it('a message and a change keep the fingerprints earlier versions gave them: a message sent before an upgrade is a repeat after it', () => {
		expect(messageFingerprint({ ...message, params: { shop: 'East', code: '1234', name: 'Li' } })).toBe('9124c7f56485ed762e644749fc80706f');
		expect(changeFingerprint('account', 'signatureCreate', { type: 1, name: 'Shop' })).toBe('73f42b9964b956e3f232912224b5b346');
	});

	it.each([
		['another account', { account: 'other-account' }],
		['another number', { phone: '13900000002' }],
		['another signature', { signId: 8 }],
		['another template', { templateId: 10 }],
		['another parameter value', { params: { code: '1235', name: 'Li' } }],
		['another parameter name', { params: { code: '1234', nom: 'Li' } }],
		['no parameters', { params: undefined }],
	])('%s is another message', (_label, change) => {
		expect(messageFingerprint({ ...message, ...change })).not.toBe(messageFingerprint(message));
	});

	it('a change is the same for the same account, operation and fields in any order, and differs in any of them', () => {
		const print = changeFingerprint('account', 'signatureCreate', { name: 'Shop', type: 1 });
		expect(print).toMatch(/^[0-9a-f]{32}$/);
		expect(changeFingerprint('account', 'signatureCreate', { type: 1, name: 'Shop' })).toBe(print);
		expect(changeFingerprint('other', 'signatureCreate', { name: 'Shop', type: 1 })).not.toBe(print);
		expect(changeFingerprint('account', 'templateCreate', { name: 'Shop', type: 1 })).not.toBe(print);
		expect(changeFingerprint('account', 'signatureCreate', { name: 'Shop', type: 2 })).not.toBe(print);
	});
});

describe('the calendar windows of a send', () => {
	const limits = { perMinute: 1, perHour: 5, perDay: 10 };

	it('the minute, the hour and the China day it falls in, with when each ends', () => {
		// 2026-11-22 15:59:59.999 UTC is 23:59:59.999 in China: the last instant of the China day.
		const at = Date.UTC(2026, 10, 22, 15, 59, 59, 999);
		const windows = countWindows(limits, '13900000001', at);
		expect(windows.map(({ name, allowed }) => [name, allowed])).toEqual([
			['minute', 1],
			['hour', 5],
			['day', 10],
		]);
		expect(windows.map((window) => new Date(window.endsAt).toISOString())).toEqual(['2026-11-22T16:00:00.000Z', '2026-11-22T16:00:00.000Z', '2026-11-22T16:00:00.000Z']);
		// One millisecond later every window is the next one.
		const next = countWindows(limits, '13900000001', at + 1);
		expect(next.map((window) => window.number)).toEqual(windows.map((window) => window.number + 1));
		expect(windows[0].number).toBe(Math.floor(at / 60_000));
		expect(windows[1].number).toBe(Math.floor(at / 3_600_000));
		expect(windows[2].number).toBe(Math.floor((at + 8 * 3_600_000) / 86_400_000));
	});

	it('none without limits, or without a number (a signature or template change)', () => {
		expect(countWindows(undefined, '13900000001', 0)).toEqual([]);
		expect(countWindows(limits, undefined, 0)).toEqual([]);
	});

	it('a refusal names the message it would be, the number, the window and what the node allows', () => {
		const [minute, , day] = countWindows(limits, '13900000001', Date.UTC(2026, 10, 22, 2));
		expect(limitProblem('13900000001', minute)).toBe('would be message 2 to 13900000001 in this calendar minute; this node allows 1');
		expect(limitProblem('13900000001', day)).toBe('would be message 11 to 13900000001 in this calendar day (China time); this node allows 10');
	});
});
