import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { TOKEN_IN_PATH_VERSION } from './callbackUrl';

/**
 * The time a callback arrived, for the item. From version 1.2 in China time with its zone, like
 * every gateway date in the item (`2026-11-22T17:00:00.000+08:00`); before, UTC as saved workflows expect.
 */
export function receivedAt(ctx: IWebhookFunctions, now = new Date()): string {
	if (ctx.getNode().typeVersion < TOKEN_IN_PATH_VERSION) return now.toISOString();
	return `${new Date(now.getTime() + 8 * 3_600_000).toISOString().slice(0, -1)}+08:00`;
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
