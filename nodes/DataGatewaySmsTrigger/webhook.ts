/**
 * One callback at the SMS Trigger, as a row of steps: check the request (security, body, action,
 * shape) → note a review result in the catalogue → the event the workflow asked for, presented →
 * not a duplicate → start. The node answers rejects itself (400, 401, 403); n8n answers a start.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { describeSchemaProblem } from '../shared/gateway/schemas/envelope';
import { callbackSchemas } from '../shared/gateway/schemas/callbacks';
import { presentReviewed, presentTask } from '../shared/output/smsObjects';
import { CALLBACK_ACTIONS, type CallbackAction } from '../shared/gateway/catalog';
import { actionOf, readCallbackBody, readGuard, reasonForLog, rejectedEvent, rejectRequest, type BodySource, type Rejection } from './callbackRequest';
import { DEFAULT_DUPLICATE_WINDOW_SECONDS } from './description';
import { isFirstStart, reportIdentity } from './recentEvents';
import { presentedToken } from './callbackUrl';
import { itemTime, notStartedWhileListening, receivedAt } from './listening';
import { sendOfReport } from './sendOfReport';
import { noteReview } from './reviewCatalogue';

export const STARTED_ANSWER = { received: true, started: true };

/** The event name the workflow sees for each gateway action, and the output key of its object. */
const EVENTS: Record<CallbackAction, { event: string; key: string }> = {
	report: { event: 'report', key: 'report' },
	sign: { event: 'signature', key: 'signature' },
	template: { event: 'template', key: 'template' },
};

type Callback = z.output<(typeof callbackSchemas)[CallbackAction]>;
/** A callback that passed every check, or why it was refused (with the body as far as it was read, for the log and the rejected item). */
type Checked = { callback: Callback } | { rejection: Rejection; readBody: unknown };
/** What the workflow gets of a callback it asked for, or why it does not start. */
type Presented = { object: IDataObject; send: IDataObject } | { notStarted: string };

function isCallbackAction(value: unknown): value is CallbackAction {
	return typeof value === 'string' && (CALLBACK_ACTIONS as readonly string[]).includes(value);
}

export async function receiveCallback(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	const request = ctx.getRequestObject();
	const body: BodySource = { parsed: ctx.getBodyData(), rawBody: request.rawBody };
	const checked = checkCallback(ctx, body);
	if ('rejection' in checked) return rejectCallback(ctx, checked.rejection, body, checked.readBody);
	const { callback } = checked;
	// Whether or not it starts the workflow, a review result is what the catalogue should show.
	if (callback.action !== 'report') await noteReview(ctx, callback.action, callback.sign);
	const presented = await presentCallback(ctx, callback);
	if ('notStarted' in presented) return notStarted(ctx, presented.notStarted, callback);
	if (isDuplicate(ctx, callback, presented.object)) return notStarted(ctx, 'duplicate', callback);

	const { event, key } = EVENTS[callback.action];
	// Answered by n8n (the description's responseData), not here: it replies after saving the static data
	// that isDuplicate wrote, so a repeat sent after this answer sees the event. webhookResponse is the same answer for callers that read it.
	return {
		webhookResponse: STARTED_ANSWER,
		workflowData: [ctx.helpers.returnJsonArray([{ event, action: callback.action, [key]: presented.object, ...presented.send, receivedAt: receivedAt(ctx) }])],
	};
}

/** Security first, then the body, its action and its shape. A setting that cannot work fails closed, recorded where the user looks. */
function checkCallback(ctx: IWebhookFunctions, body: BodySource): Checked {
	const guard = readGuard(ctx.getNodeParameter('security', {}) as IDataObject);
	if ('problem' in guard) throw new NodeOperationError(ctx.getNode(), `Security > ${guard.field} ${guard.problem}`, { description: guard.fix });
	const request = ctx.getRequestObject();
	const rejection = rejectRequest(guard, {
		sourceAddress: request.ip ?? request.socket?.remoteAddress,
		query: { ...(ctx.getQueryData() as IDataObject), token: presentedToken(ctx) },
		headers: ctx.getHeaderData() as IDataObject,
	});
	if (rejection) return { rejection, readBody: body.parsed };
	const read = readCallbackBody(body);
	if ('status' in read) return { rejection: read, readBody: body.parsed };
	const refused = (reason: string): Checked => ({ rejection: { status: 400, reason }, readBody: read.body });
	const { action } = read.body;
	if (action === undefined || action === null || action === '') return refused('missing action');
	if (!isCallbackAction(action)) return refused(`unknown action ${JSON.stringify(action)}`);
	const parsed = callbackSchemas[action].safeParse(read.body);
	if (!parsed.success) return refused(`invalid ${action} callback: ${describeSchemaProblem(parsed.error)}`);
	return { callback: parsed.data };
}

/** The event as the workflow sees it, when its event and status were selected; a report with its send (looked up, and marked received, first). */
async function presentCallback(ctx: IWebhookFunctions, callback: Callback): Promise<Presented> {
	const events = ctx.getNodeParameter('events', []) as string[];
	if (!events.includes(callback.action)) return { notStarted: 'event not selected' };
	if (callback.action === 'report') {
		// Looked up before the status filter: an unselected status was still received.
		const sendOf = await sendOfReport(ctx, callback.sms);
		if (sendOf.caughtUp) return { notStarted: 'already output by Check Pending Deliveries' };
		const send = sendOf.fields;
		if (typeof send.sentAt === 'string') send.sentAt = itemTime(ctx, new Date(send.sentAt));
		const object = presentTask(callback.sms);
		const wanted = ctx.getNodeParameter('reportStatuses', []) as string[];
		if (!wanted.includes(String(object.statusLabel))) return { notStarted: `report status ${object.statusLabel} not selected` };
		return { object, send };
	}
	const object = presentReviewed(callback.sign);
	const wanted = ctx.getNodeParameter('reviewResults', []) as string[];
	if (!wanted.includes(String(object.statusLabel))) return { notStarted: `review result ${object.statusLabel} not selected` };
	return { object, send: {} };
}

/** The same event (action, ID, status; a report's phone and send time too) seen within the Duplicate Window; notes this one. */
function isDuplicate(ctx: IWebhookFunctions, callback: Callback, object: IDataObject): boolean {
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const windowSeconds = Number(options.duplicateWindowSeconds ?? DEFAULT_DUPLICATE_WINDOW_SECONDS);
	const identity = callback.action === 'report' ? [reportIdentity(callback.sms)] : [];
	const eventKey = [ctx.getWorkflow().id, ctx.getNode().id, ctx.getMode(), callback.action, object.id, object.status, ...identity].join('|');
	return windowSeconds > 0 && !isFirstStart(ctx.getWorkflowStaticData('node'), eventKey, windowSeconds * 1000);
}

/** n8n would answer 200 to anything; the node answers itself so rejects get 400, 401 or 403. */
function reply(ctx: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	ctx.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

function notStarted(ctx: IWebhookFunctions, reason: string, callback: Callback): IWebhookResponseData {
	return {
		...reply(ctx, 200, { received: true, started: false, reason }),
		workflowData: notStartedWhileListening(ctx, { reason, httpStatus: 200, action: callback.action }),
	};
}

/** The gateway pushes each event once: a rejected one leaves a warning (never the body), and starts the workflow if asked. */
function rejectCallback(ctx: IWebhookFunctions, rejection: Rejection, body: BodySource, readBody: unknown): IWebhookResponseData {
	const action = actionOf(readBody);
	ctx.logger.warn(
		`Data Gateway SMS Trigger: rejected a callback with HTTP ${rejection.status}: ${reasonForLog(rejection.reason)}${action === undefined ? '' : ` (action ${JSON.stringify(action)})`}`,
		{ workflowId: ctx.getWorkflow().id, node: ctx.getNode().name, status: rejection.status },
	);
	const answered = reply(ctx, rejection.status, { error: rejection.reason });
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	if (rejection.status !== 400 || options.outputRejected !== true) {
		return { ...answered, workflowData: notStartedWhileListening(ctx, { reason: rejection.reason, httpStatus: rejection.status, action }) };
	}
	return { ...answered, workflowData: [ctx.helpers.returnJsonArray([{ ...rejectedEvent(rejection, body, action), receivedAt: receivedAt(ctx) }])] };
}
