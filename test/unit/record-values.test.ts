/**
 * What the send records keep, and how it is read back (store/sendRecords/recordValues.ts): every
 * value checked as it is read (a value of another shape is an error naming the kind of record, never
 * a guess), the keys' text (records written by an earlier version must still be found), and the
 * staged values of one update: what it writes, for how long, and the counts a send took.
 */
import { valueTag } from '../../nodes/shared/store/keyName';
import {
	countEndsAt,
	countKeyOf,
	messageKeyOf,
	readCount,
	readMessage,
	readSend,
	sendKeyOf,
	StagedValues,
	UnnamedKey,
	UnreadableRecord,
} from '../../nodes/shared/store/sendRecords/recordValues';

const SEND = sendKeyOf('wf|node', 'e1', 0, 3);
const MESSAGE = messageKeyOf('wf|node', '13900000001', 'print');
const MINUTE_NUMBER = 29_400_000;
const COUNT = countKeyOf('wf|node', '13900000001', { name: 'minute', number: MINUTE_NUMBER });

describe('the keys', () => {
	it('keep the text earlier versions wrote them with: a send by node, execution, run and item; a message and a count grouped by number', () => {
		expect(SEND).toBe('sms-send|wf|node|e1|0>3');
		expect(MESSAGE).toBe('sms-number|wf|node|13900000001>sms-message|print');
		expect(COUNT).toBe(`sms-number|wf|node|13900000001>sms-count|minute|${MINUTE_NUMBER}`);
		// A signature or template change has no number: its messages are grouped by node.
		expect(messageKeyOf('wf|node', undefined, 'change')).toBe('sms-number|wf|node|>sms-message|change');
		expect(countKeyOf('wf|node', undefined, { name: 'day', number: 1 })).toBe('sms-number|wf|node|>sms-count|day|1');
	});
});

describe('a send record read back', () => {
	it('is absent when its key is, and read as written, its task ID kept only when it has one', () => {
		expect(readSend(SEND, undefined)).toBeUndefined();
		expect(readSend(SEND, JSON.stringify({ state: 'reserved', token: 't', counted: ['a'] }))).toStrictEqual({ state: 'reserved', token: 't', counted: ['a'] });
		expect(readSend(SEND, JSON.stringify({ state: 'sent', token: 't', counted: [], taskId: null }))).toStrictEqual({ state: 'sent', token: 't', counted: [], taskId: null });
		expect(readSend(SEND, JSON.stringify({ state: 'unknown', token: 't', counted: [], taskId: 'T1', extra: 1 }))).toStrictEqual({ state: 'unknown', token: 't', counted: [], taskId: 'T1' });
	});

	it.each([
		['not JSON', '{state', 'is not JSON'],
		['text', '"OK"', 'is not an object'],
		['null', 'null', 'is not an object'],
		['a list', '[]', 'is not an object'],
		['of another state', JSON.stringify({ state: 'done', token: 't', counted: [] }), 'has an unexpected shape'],
		['without a state', JSON.stringify({ token: 't', counted: [] }), 'has an unexpected shape'],
		['without a token', JSON.stringify({ state: 'sent', counted: [] }), 'has an unexpected shape'],
		['with a token that is a number', JSON.stringify({ state: 'sent', token: 1, counted: [] }), 'has an unexpected shape'],
		['without its counts', JSON.stringify({ state: 'sent', token: 't' }), 'has an unexpected shape'],
		['with counts that are not text', JSON.stringify({ state: 'sent', token: 't', counted: ['a', 2] }), 'has an unexpected shape'],
		['with counts that are not a list', JSON.stringify({ state: 'sent', token: 't', counted: 'a' }), 'has an unexpected shape'],
		['with a task ID that is a number', JSON.stringify({ state: 'sent', token: 't', counted: [], taskId: 5 }), 'has a task ID that is not text'],
	])('%s is an error naming the record', (_label, value, problem) => {
		expect(() => readSend(SEND, value)).toThrow(new UnreadableRecord(SEND, problem));
		expect(() => readSend(SEND, value)).toThrow(`a send record (sms-send) ${problem}`);
	});
});

describe("a message's record read back", () => {
	const holder = { state: 'reserved', counted: ['a'] };

	it('is absent when its key is, and read as written (older holders without token, execution or time)', () => {
		expect(readMessage(MESSAGE, undefined)).toBeUndefined();
		const full = { execution: 'e1', holders: { s1: { ...holder, token: 't', execution: 'e1', at: 5 }, s2: holder } };
		expect(readMessage(MESSAGE, JSON.stringify(full))).toStrictEqual(full);
		expect(readMessage(MESSAGE, JSON.stringify({ execution: 'e1', holders: {} }))).toStrictEqual({ execution: 'e1', holders: {} });
	});

	it.each([
		['text', '"OK"', 'is not an object'],
		['without its execution', { holders: {} }, 'has an unexpected shape'],
		['with an execution that is a number', { execution: 1, holders: {} }, 'has an unexpected shape'],
		['without holders', { execution: 'e1' }, 'has an unexpected shape'],
		['with holders that are null', { execution: 'e1', holders: null }, 'has an unexpected shape'],
		['with holders that are text', { execution: 'e1', holders: 'h' }, 'has an unexpected shape'],
		['with holders in a list', { execution: 'e1', holders: [holder] }, 'has an unexpected shape'],
		['with a holder that is null', { execution: 'e1', holders: { s1: null } }, 'has a holder of an unexpected shape'],
		['with a holder of another state', { execution: 'e1', holders: { s1: { ...holder, state: 'gone' } } }, 'has a holder of an unexpected shape'],
		['with a holder without a state', { execution: 'e1', holders: { s1: { counted: [] } } }, 'has a holder of an unexpected shape'],
		['with a holder whose counts are not text', { execution: 'e1', holders: { s1: { ...holder, counted: [1] } } }, 'has a holder of an unexpected shape'],
		['with a holder whose token is a number', { execution: 'e1', holders: { s1: { ...holder, token: 1 } } }, 'has a holder of an unexpected shape'],
		['with a holder whose execution is a number', { execution: 'e1', holders: { s1: { ...holder, execution: 1 } } }, 'has a holder of an unexpected shape'],
		['with a holder whose time is text', { execution: 'e1', holders: { s1: { ...holder, at: '5' } } }, 'has a holder of an unexpected shape'],
		['with a holder whose time is null', { execution: 'e1', holders: { s1: { ...holder, at: null } } }, 'has a holder of an unexpected shape'],
		['with a second holder of another shape', { execution: 'e1', holders: { s1: holder, s2: { ...holder, token: false } } }, 'has a holder of an unexpected shape'],
	])('%s is an error naming the record', (_label, value, problem) => {
		expect(() => readMessage(MESSAGE, typeof value === 'string' ? value : JSON.stringify(value))).toThrow(`a send record (sms-message) ${problem}`);
	});
});

describe('a count read back', () => {
	it('is 0 when absent, and a whole number of up to 9 digits', () => {
		expect(readCount(COUNT, undefined)).toBe(0);
		expect(readCount(COUNT, '0')).toBe(0);
		expect(readCount(COUNT, '12')).toBe(12);
		expect(readCount(COUNT, '999999999')).toBe(999_999_999);
	});

	it.each(['', '-1', '1.5', '1e3', ' 1', '1 ', 'one', '1234567890'])('%p is an error naming the record', (value) => {
		expect(() => readCount(COUNT, value)).toThrow('a send record (sms-count) is not a count');
	});

	it('ends with its window (the day at midnight China time); a key naming no window is an error', () => {
		expect(countEndsAt(COUNT)).toBe((MINUTE_NUMBER + 1) * 60_000);
		expect(countEndsAt(countKeyOf('n', '1', { name: 'hour', number: 10 }))).toBe(11 * 3_600_000);
		expect(new Date(countEndsAt(countKeyOf('n', '1', { name: 'day', number: 20_000 }))).toISOString()).toBe('2024-10-04T16:00:00.000Z');
		expect(() => countEndsAt(countKeyOf('n', '1', { name: 'week', number: 1 }))).toThrow('a send record (sms-count) names no window');
		expect(() => countEndsAt('sms-number|n|1>sms-count|minute|x')).toThrow('a send record (sms-count) names no window');
		expect(() => countEndsAt('sms-number|n|1>sms-count|minute|1.5')).toThrow('names no window');
		expect(() => countEndsAt('something|else')).toThrow('a send record (a key) names no window');
	});
});

describe('the values of one update', () => {
	const NOW = MINUTE_NUMBER * 60_000 + 20_000;
	const staged = (values: Record<string, string | undefined>, phones = new Map<string, string>()) => new StagedValues(Object.keys(values), Object.values(values), NOW, phones);

	it('reads see the update\'s own earlier changes; only changed keys are written, a removed one as null', () => {
		const values = staged({ [SEND]: undefined, [MESSAGE]: JSON.stringify({ execution: 'e1', holders: { s: { state: 'sent', counted: [] } } }), [COUNT]: '2' });
		expect(values.has(SEND)).toBe(true);
		expect(values.has('sms-send|other')).toBe(false);
		expect(values.now).toBe(NOW);
		values.setSend(SEND, { state: 'reserved', token: 't', counted: [] }, 5_000);
		expect(values.send(SEND)).toEqual({ state: 'reserved', token: 't', counted: [] });
		expect(values.current(SEND)).toBe(JSON.stringify({ state: 'reserved', token: 't', counted: [] }));
		values.setMessage(MESSAGE, { execution: 'e1', holders: {} }, 5_000);
		expect(values.message(MESSAGE)).toBeUndefined();
		expect(values.writes()).toEqual([
			{ key: SEND, value: JSON.stringify({ state: 'reserved', token: 't', counted: [] }), ttlMs: 5_000 },
			{ key: MESSAGE, value: null },
		]);
		expect(values.count(COUNT)).toBe(2);
	});

	it('a write carries the number it is about, so that erasing the number finds it; a lifetime is at least 1 ms', () => {
		const values = staged({ [SEND]: undefined, [MESSAGE]: undefined }, new Map([[MESSAGE, '13900000001']]));
		values.setSend(SEND, { state: 'reserved', token: 't', counted: [] }, 0);
		values.setMessage(MESSAGE, { execution: 'e1', holders: { [SEND]: { state: 'reserved', counted: [] } } }, -5);
		expect(values.writes()).toEqual([
			{ key: SEND, value: JSON.stringify({ state: 'reserved', token: 't', counted: [] }), ttlMs: 1 },
			{ key: MESSAGE, value: JSON.stringify({ execution: 'e1', holders: { [SEND]: { state: 'reserved', counted: [] } } }), ttlMs: 1, phone: '13900000001' },
		]);
	});

	it('a count moves by whole steps, kept until its window ends and a minute more; at 0 it is removed, and never goes below', () => {
		const values = staged({ [COUNT]: '1' });
		values.addToCount(COUNT, 1);
		expect(values.writes()).toEqual([{ key: COUNT, value: '2', ttlMs: 40_000 + 60_000 }]);
		values.addToCount(COUNT, -2);
		expect(values.writes()).toEqual([{ key: COUNT, value: null }]);
		values.addToCount(COUNT, -1);
		expect(values.count(COUNT)).toBe(0);
		values.addToCount(COUNT, 1);
		expect(values.count(COUNT)).toBe(1);
	});

	it('names the counts a send took by tag, or by the key itself in records written before tags; a count this update does not name is left out', () => {
		const other = countKeyOf('wf|node', '13900000001', { name: 'hour', number: 1 });
		const values = staged({ [COUNT]: '1', [other]: '1' });
		expect(values.taggedKeys([valueTag(other), valueTag(COUNT)])).toEqual([other, COUNT]);
		expect(values.taggedKeys([COUNT, valueTag('sms-count|an ended window'), 'an ended window'])).toEqual([COUNT]);
		expect(values.taggedKeys([])).toEqual([]);
	});

	it('a key the update did not name can be neither read nor written: the decision is wrong, not the store', () => {
		const values = staged({ [SEND]: undefined });
		expect(() => values.count(COUNT)).toThrow(new UnnamedKey(COUNT));
		expect(() => values.count(COUNT)).toThrow('A send-records decision read sms-count, which its update did not name');
		expect(() => values.setMessage(MESSAGE, undefined, 1)).toThrow('A send-records decision read sms-message, which its update did not name');
		expect(() => values.current(COUNT)).toThrow(UnnamedKey);
		expect(values.writes()).toEqual([]);
		expect(new UnnamedKey(COUNT).name).toBe('UnnamedKey');
		expect(new UnreadableRecord(COUNT, 'x').name).toBe('UnreadableRecord');
	});
});
