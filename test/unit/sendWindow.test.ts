/** Send Window (nodes/shared/checks/sendWindow.ts), at fixed instants: edges, midnight crossing, the China day. */
import { checkSendWindow, outsideWindow, readSendWindow, sendWindowOption, windowText, type SendWindow } from '../../nodes/shared/checks/sendWindow';

/** An instant written in China time. */
const china = (local: string) => Date.parse(`${local}+08:00`);
const hours = (from: string, until: string): SendWindow => {
	const minutes = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
	return { startMinute: minutes(from), endMinute: minutes(until) };
};

describe('checkSendWindow', () => {
	const day = hours('08:00', '21:00');
	it.each<[string, string | null]>([
		['2026-11-26T00:00:00.000', '2026-11-26T08:00:00+08:00'],
		['2026-11-26T07:59:59.999', '2026-11-26T08:00:00+08:00'],
		['2026-11-26T08:00:00.000', null],
		['2026-11-26T12:00:00.000', null],
		['2026-11-26T20:59:59.999', null],
		['2026-11-26T21:00:00.000', '2026-11-27T08:00:00+08:00'],
		['2026-11-26T23:30:00.000', '2026-11-27T08:00:00+08:00'],
		['2026-12-31T21:30:00.000', '2027-01-01T08:00:00+08:00'],
	])('08:00–21:00 at %s China time: opens %s (null: inside)', (local, opens) => {
		const check = checkSendWindow(china(local), day);
		if (opens === null) return expect(check).toEqual({ inside: true });
		expect(check).toEqual({ inside: false, opensAt: opens, opensAtMs: Date.parse(opens) });
	});

	it('counts the China day, not the UTC one: 23:30 UTC is 07:30 the next day in China', () => {
		expect(checkSendWindow(Date.parse('2026-11-25T23:30:00Z'), day)).toMatchObject({ inside: false, opensAt: '2026-11-26T08:00:00+08:00' });
		expect(checkSendWindow(Date.parse('2026-11-26T12:59:59Z'), day)).toEqual({ inside: true });
		expect(checkSendWindow(Date.parse('2026-11-26T13:00:00Z'), day)).toMatchObject({ inside: false, opensAt: '2026-11-27T08:00:00+08:00' });
	});

	const night = hours('22:00', '06:00');
	it.each<[string, string | null]>([
		['2026-11-26T21:59:59.999', '2026-11-26T22:00:00+08:00'],
		['2026-11-26T22:00:00.000', null],
		['2026-11-26T23:59:59.999', null],
		['2026-11-27T00:00:00.000', null],
		['2026-11-27T05:59:59.999', null],
		['2026-11-27T06:00:00.000', '2026-11-27T22:00:00+08:00'],
		['2026-11-27T12:00:00.000', '2026-11-27T22:00:00+08:00'],
	])('22:00–06:00 (crossing midnight) at %s: opens %s', (local, opens) => {
		const check = checkSendWindow(china(local), night);
		if (opens === null) return expect(check).toEqual({ inside: true });
		expect(check).toEqual({ inside: false, opensAt: opens, opensAtMs: Date.parse(opens) });
	});

	it('until 00:00 means until midnight', () => {
		const untilMidnight = hours('08:00', '00:00');
		expect(checkSendWindow(china('2026-11-26T23:59:59.999'), untilMidnight)).toEqual({ inside: true });
		expect(checkSendWindow(china('2026-11-27T00:00:00.000'), untilMidnight)).toMatchObject({ inside: false, opensAt: '2026-11-27T08:00:00+08:00' });
	});

	it('23:59 is an edge like any other (issue 41): until 23:59, the last minute of the day is outside; from 23:59, inside', () => {
		expect(readSendWindow({ sendWindow: { window: { startHour: 8, startMinute: 0, endHour: 23, endMinute: 59, outside: 'refuse' } } })).toEqual({ window: hours('08:00', '23:59') });
		expect(readSendWindow({ sendWindow: { window: { startHour: 23, startMinute: 59, endHour: 6, endMinute: 0, outside: 'refuse' } } })).toEqual({ window: hours('23:59', '06:00') });
		expect(checkSendWindow(china('2026-11-26T23:58:59.999'), hours('08:00', '23:59'))).toEqual({ inside: true });
		expect(checkSendWindow(china('2026-11-26T23:59:00.000'), hours('08:00', '23:59'))).toMatchObject({ inside: false, opensAt: '2026-11-27T08:00:00+08:00' });
		expect(checkSendWindow(china('2026-11-26T23:59:00.000'), hours('23:59', '06:00'))).toEqual({ inside: true });
	});

	it('minutes count: 08:30–21:15', () => {
		const window = hours('08:30', '21:15');
		expect(checkSendWindow(china('2026-11-26T08:29:59.999'), window)).toMatchObject({ opensAt: '2026-11-26T08:30:00+08:00' });
		expect(checkSendWindow(china('2026-11-26T21:14:59.999'), window)).toEqual({ inside: true });
		expect(checkSendWindow(china('2026-11-26T21:15:00.000'), window)).toMatchObject({ opensAt: '2026-11-27T08:30:00+08:00' });
	});

	it('at every 7th minute of two days, for several windows: inside as the China clock says, else the next opening exactly', () => {
		const windows = [day, night, hours('00:00', '12:00'), hours('23:59', '00:01'), hours('09:15', '09:16')];
		const start = Date.parse('2026-11-26T00:00:00Z');
		for (const window of windows) {
			for (let now = start; now < start + 2 * 86_400_000; now += 7 * 60_000 + 13) {
				const local = new Date(now + 8 * 3_600_000);
				const minute = local.getUTCHours() * 60 + local.getUTCMinutes();
				const expected = window.startMinute < window.endMinute ? minute >= window.startMinute && minute < window.endMinute : minute >= window.startMinute || minute < window.endMinute;
				const check = checkSendWindow(now, window);
				expect([windowText(window), now, check.inside]).toEqual([windowText(window), now, expected]);
				if (check.inside) continue;
				expect(check.opensAtMs).toBeGreaterThan(now);
				expect(check.opensAtMs - now).toBeLessThanOrEqual(86_400_000);
				expect(checkSendWindow(check.opensAtMs, window).inside).toBe(true);
				expect(checkSendWindow(check.opensAtMs - 1, window).inside).toBe(false);
			}
		}
	});
});

describe('the refusal', () => {
	it('names the window, when it opens, and the Wait node', () => {
		const window = hours('08:00', '21:00');
		const check = checkSendWindow(china('2026-11-26T21:30:00'), window);
		if (check.inside) throw new Error('expected outside');
		const refusal = outsideWindow(window, check);
		expect(refusal.message).toBe('outside the send window 08:00–21:00 China time; opens at 2026-11-27T08:00:00+08:00; route it to a Wait node');
		expect(refusal.description).toContain('Nothing was sent, recorded or counted');
		expect(refusal.json).toEqual({ sent: false, outsideSendWindow: true, sendWindow: '08:00–21:00', opensAt: '2026-11-27T08:00:00+08:00', opensAtMs: Date.parse('2026-11-27T08:00:00+08:00') });
	});
});

describe('readSendWindow, as saved nodes (up to 1.4) read it', () => {
	it('is off when the option is not added, or added without its window', () => {
		expect(readSendWindow({}, 1.4)).toEqual({});
		expect(readSendWindow({ sendWindow: {} }, 1.4)).toEqual({});
	});
	it('reads the parts, numbers given as text too; a part left out takes the form\'s default', () => {
		expect(readSendWindow({ sendWindow: { window: { startHour: 9, startMinute: '30', endHour: '22', endMinute: 0 } } }, 1.4)).toEqual({ window: { startMinute: 570, endMinute: 1320 } });
		expect(readSendWindow({ sendWindow: { window: {} } }, 1.4)).toEqual({ window: hours('08:00', '21:00') });
	});
	it('the form\'s defaults are 08:00–21:00, and the option is off by default', () => {
		expect(sendWindowOption.default).toEqual({});
		const values = Object.fromEntries((sendWindowOption.options as Array<{ values: Array<{ name: string; default: unknown }> }>)[0].values.map((value) => [value.name, value.default]));
		expect(readSendWindow({ sendWindow: { window: values } }, 1.4)).toEqual({ window: hours('08:00', '21:00') });
	});
	it.each<[unknown, string]>([
		[24, 'Send Window From Hour'],
		[-1, 'Send Window From Hour'],
		[1.5, 'Send Window From Hour'],
		['eight', 'Send Window From Hour'],
	])('refuses From Hour %p, naming the field', (startHour, field) => {
		expect(readSendWindow({ sendWindow: { window: { startHour } } }, 1.4).problem?.field).toBe(field);
	});
	it('refuses Until Minute 60 and a window that starts where it ends', () => {
		expect(readSendWindow({ sendWindow: { window: { endMinute: 60 } } }, 1.4).problem).toMatchObject({ field: 'Send Window Until Minute', problem: '"60" is not a whole number from 0 to 59' });
		expect(readSendWindow({ sendWindow: { window: { startHour: 9, endHour: 9 } } }, 1.4).problem).toMatchObject({ field: 'Send Window', problem: 'starts and ends at the same time (09:00)' });
	});
});

describe('readSendWindow from SMS 1.5: adding the option refuses nothing until Outside These Hours says Refuse (issue 42)', () => {
	const defaults = Object.fromEntries((sendWindowOption.options as Array<{ values: Array<{ name: string; default: unknown }> }>)[0].values.map((value) => [value.name, value.default]));
	it('the option as added (its defaults shown) applies no window: the choice is visible and left at Send Anyway', () => {
		expect(defaults.outside).toBe('send');
		expect(readSendWindow({ sendWindow: { window: defaults } }, 1.5)).toEqual({});
		expect(readSendWindow({ sendWindow: { window: {} } }, 1.5)).toEqual({});
	});
	it('Refuse applies the hours shown', () => {
		expect(readSendWindow({ sendWindow: { window: { ...defaults, outside: 'refuse' } } }, 1.5)).toEqual({ window: hours('08:00', '21:00') });
		expect(readSendWindow({ sendWindow: { window: { outside: 'refuse', startHour: 24 } } }, 1.5).problem?.field).toBe('Send Window From Hour');
	});
	it('the choice is shown from 1.5 only: a saved node keeps its window applied as before', () => {
		const outside = (sendWindowOption.options as Array<{ values: Array<{ name: string; displayOptions?: unknown }> }>)[0].values.find((value) => value.name === 'outside');
		expect(outside?.displayOptions).toEqual({ show: { '@version': [{ _cnd: { gte: 1.5 } }] } });
		expect(readSendWindow({ sendWindow: { window: defaults } }, 1.4)).toEqual({ window: hours('08:00', '21:00') });
	});
});
