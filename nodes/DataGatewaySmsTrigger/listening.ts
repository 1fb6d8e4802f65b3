import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { DEFAULT_GATEWAY_UTC_OFFSET } from '../shared/output/convert';
import { TOKEN_IN_PATH_VERSION } from './callbackUrl';

/** The gateway's zone (China time, "+08:00") in milliseconds east of UTC. */
const [, sign, hours, minutes] = /^([+-])(\d\d):(\d\d)$/.exec(DEFAULT_GATEWAY_UTC_OFFSET) ?? ['', '+', '08', '00'];
const GATEWAY_OFFSET_MS = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000;

/**
 * An instant in China time with its zone, like every gateway date in a report item
 * (`2026-11-22T17:00:00.000+08:00`): the trigger's from 1.2, Check Pending Deliveries' from SMS 1.4.
 */
export function chinaItemTime(instant: Date): string {
	return `${new Date(instant.getTime() + GATEWAY_OFFSET_MS).toISOString().slice(0, -1)}${DEFAULT_GATEWAY_UTC_OFFSET}`;
}

/** An instant as the trigger's items write it: China time from version 1.2; before, UTC as saved workflows expect. */
export function itemTime(ctx: IWebhookFunctions, instant: Date): string {
	if (ctx.getNode().typeVersion < TOKEN_IN_PATH_VERSION) return instant.toISOString();
	return chinaItemTime(instant);
}

/** The time a callback arrived, for the item. */
export function receivedAt(ctx: IWebhookFunctions): string {
	return itemTime(ctx, new Date());
}

/**
 * While the editor listens ("Execute step", the Test URL), a callback that starts nothing would
 * leave no sign: the answer goes to the gateway, not to the user. There it starts the test run
 * with one item that says why (HTTP status and reason; never the body of a refused request).
 * Production runs (Production URL) are unchanged.
 */
export function notStartedWhileListening(
	ctx: IWebhookFunctions,
	outcome: { reason: string; httpStatus: number; action?: string },
): INodeExecutionData[][] | undefined {
	if (ctx.getMode() !== 'manual') return undefined;
	const item: IDataObject = {
		event: 'notStarted',
		notStarted: true,
		reason: outcome.reason,
		httpStatus: outcome.httpStatus,
		action: outcome.action ?? null,
		hint:
			outcome.httpStatus === 200
				? 'The callback arrived but the trigger\'s settings filter it out (Events, Report Statuses, Review Results or the Duplicate Window); in production it starts nothing.'
				: 'The callback was refused by the Security settings or is not a gateway callback; in production it starts nothing. Check the URL (with its token), the header and the allowed IPs.',
		receivedAt: receivedAt(ctx),
	};
	return [ctx.helpers.returnJsonArray([item])];
}
