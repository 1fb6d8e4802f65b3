/**
 * Send Window (issue 34): the hours of the day, China time, in which an SMS may go out. A send
 * outside them is refused before anything is recorded or counted, saying when the window opens, so
 * a workflow can route the item to n8n's Wait node. Marketing texts at night draw complaints.
 */
import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { chinaIso } from '../lookups/chinaTime';
import { readmeLink } from '../n8n/readmeLink';

/** China time is UTC+8 all year (no daylight saving), as in chinaTime.ts. */
const CHINA_OFFSET_MS = 8 * 3_600_000;
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** From `start` (included) to `end` (excluded), in minutes after 00:00 China time; `end` before `start` crosses midnight. */
export interface SendWindow {
	startMinute: number;
	endMinute: number;
}

export type WindowCheck =
	| { inside: true }
	| {
			inside: false;
			/** When the window next opens: epoch ms, and China time as ISO 8601 with +08:00. */
			opensAtMs: number;
			opensAt: string;
	  };

/** "08:00–21:00". */
export function windowText(window: SendWindow): string {
	const clock = (minute: number) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
	return `${clock(window.startMinute)}–${clock(window.endMinute)}`;
}

/**
 * Whether an instant is inside the window, and if not when it opens. Exactly at the start is
 * inside, exactly at the end outside. Equal start and end would be the whole day; readSendWindow
 * refuses it as a likely slip.
 */
export function checkSendWindow(nowMs: number, window: SendWindow): WindowCheck {
	const sinceMidnight = (((nowMs + CHINA_OFFSET_MS) % DAY_MS) + DAY_MS) % DAY_MS;
	const start = window.startMinute * MINUTE_MS;
	const end = window.endMinute * MINUTE_MS;
	const inside = start <= end ? sinceMidnight >= start && sinceMidnight < end : sinceMidnight >= start || sinceMidnight < end;
	if (inside) return { inside: true };
	const todayStart = nowMs - sinceMidnight + start;
	const opensAtMs = todayStart > nowMs ? todayStart : todayStart + DAY_MS;
	return { inside: false, opensAtMs, opensAt: chinaIso(opensAtMs) };
}

/** What to say when a send is outside the window: the message, the fix, and the fields an output item could carry. */
export function outsideWindow(window: SendWindow, check: Extract<WindowCheck, { inside: false }>) {
	return {
		message: `outside the send window ${windowText(window)} China time; opens at ${check.opensAt}; route it to a Wait node`,
		description: `Nothing was sent, recorded or counted for this item. To send it when the window opens, route it (Settings > On Error > Continue (using error output)) to a Wait node set to resume at ${check.opensAt}, then back to this node; or change Send Window in Options.`,
		json: { sent: false, outsideSendWindow: true, sendWindow: windowText(window), opensAt: check.opensAt, opensAtMs: check.opensAtMs } as IDataObject,
	};
}

const PARTS = [
	{ name: 'startHour', label: 'From Hour', max: 23 },
	{ name: 'startMinute', label: 'From Minute', max: 59 },
	{ name: 'endHour', label: 'Until Hour', max: 23 },
	{ name: 'endMinute', label: 'Until Minute', max: 59 },
] as const;

/** The form's defaults: a part the user removed reads as these. */
const DEFAULTS: Record<(typeof PARTS)[number]['name'], number> = { startHour: 8, startMinute: 0, endHour: 21, endMinute: 0 };

export type WindowReading = { window?: SendWindow; problem?: undefined } | { window?: undefined; problem: { field: string; problem: string; fix: string } };

/**
 * The first SMS version whose Send Window refuses nothing until "Outside These Hours" says Refuse:
 * before it, adding the option applied 08:00-21:00 at once (at 23:18 every item was refused).
 */
export const WINDOW_CHOICE_VERSION = 1.5;

/**
 * The Send Window option from Send's options (`sendOptions`): none when the option is not added,
 * nor from version 1.5 while Outside These Hours is left at Send Anyway. A part left out takes the
 * form's default; a part that is not a whole number in range is a problem.
 */
export function readSendWindow(sendOptions: IDataObject, nodeVersion = WINDOW_CHOICE_VERSION): WindowReading {
	const value = (sendOptions.sendWindow as IDataObject | undefined)?.window as IDataObject | undefined;
	if (value === undefined || value === null) return {};
	if (nodeVersion >= WINDOW_CHOICE_VERSION && value.outside !== 'refuse') return {};
	const parts: Record<string, number> = {};
	for (const part of PARTS) {
		const raw = value[part.name] ?? DEFAULTS[part.name];
		const number = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
		if (typeof number !== 'number' || !Number.isInteger(number) || number < 0 || number > part.max) {
			return { problem: { field: `Send Window ${part.label}`, problem: `"${String(raw)}" is not a whole number from 0 to ${part.max}`, fix: 'Give the window in China time, e.g. From 8:00 Until 21:00.' } };
		}
		parts[part.name] = number;
	}
	const window = { startMinute: parts.startHour * 60 + parts.startMinute, endMinute: parts.endHour * 60 + parts.endMinute };
	if (window.startMinute === window.endMinute) {
		return { problem: { field: 'Send Window', problem: `starts and ends at the same time (${windowText(window).split('–')[0]})`, fix: 'Give the hours to send in, e.g. From 8:00 Until 21:00, or remove the option to send at any hour.' } };
	}
	return { window };
}

/** Whether the hours apply (1.5): left at Send Anyway, adding the option refuses nothing. */
const OUTSIDE_FIELD: INodeProperties = {
	displayName: 'Outside These Hours',
	name: 'outside',
	type: 'options',
	options: [
		{ name: 'Send Anyway (Window Not Applied Yet)', value: 'send', description: 'Nothing is refused: set the hours first' },
		{ name: 'Refuse the Item', value: 'refuse', description: 'Refused before anything is sent or counted; its error says when the window opens, for a Wait node' },
	],
	default: 'send',
	description: 'Whether a send outside the hours below is refused. Choose Refuse once the hours are right.',
	displayOptions: { show: { '@version': [{ _cnd: { gte: WINDOW_CHOICE_VERSION } }] } },
};

const HOUR_FIELDS: INodeProperties[] = [
	{ displayName: 'From Hour', name: 'startHour', type: 'number', typeOptions: { minValue: 0, maxValue: 23 }, default: 8, description: 'Hour the window opens, China time (0-23)' },
	{ displayName: 'From Minute', name: 'startMinute', type: 'number', typeOptions: { minValue: 0, maxValue: 59 }, default: 0, description: 'Minute of that hour (0-59)' },
	{ displayName: 'Until Hour', name: 'endHour', type: 'number', typeOptions: { minValue: 0, maxValue: 23 }, default: 21, description: 'Hour the window closes, China time (0-23); a send at this exact time is outside' },
	{ displayName: 'Until Minute', name: 'endMinute', type: 'number', typeOptions: { minValue: 0, maxValue: 59 }, default: 0, description: 'Minute of that hour (0-59)' },
];

/** The "Send Window" option of Send's Options collection (1.5): off until added, and until Outside These Hours says Refuse. */
export const sendWindowOption: INodeProperties = {
	displayName: 'Send Window',
	name: 'sendWindow',
	type: 'fixedCollection',
	default: {},
	placeholder: 'Add Send Window',
	description: `Hours of the day, China time, to send in; Until before From crosses midnight. Nothing is refused until Outside These Hours says Refuse. ${readmeLink('send-window', 'More')}`,
	options: [
		{
			displayName: 'Window',
			name: 'window',
			// The choice first, above the hours it applies (a built list: n8n's linter would sort a literal one).
			values: [OUTSIDE_FIELD, ...HOUR_FIELDS],
		},
	],
};

/** The option as nodes saved before 1.5 show it: the hours apply once it is added. */
export const sendWindowOptionBefore1_5: INodeProperties = {
	...sendWindowOption,
	description: `Hours of the day, China time, to send in; Until before From crosses midnight. Outside them an item is refused, saying when the window opens. ${readmeLink('send-window', 'More')}`,
	displayOptions: { show: { '@version': [{ _cnd: { lt: WINDOW_CHOICE_VERSION } }] } },
};
