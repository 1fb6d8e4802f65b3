import { NodeOperationError } from 'n8n-workflow';
import type {
	IDataObject,
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { NODE_VERSIONS_TO_1_2, nodeSkeleton } from '../shared/n8n/description';
import { readmeUrl } from '../shared/n8n/readmeLink';
import { describeSchemaProblem } from '../shared/gateway/schemas/envelope';
import { callbackSchemas } from '../shared/gateway/schemas/callbacks';
import { presentReviewed, presentTask } from '../shared/output/smsObjects';
import { CALLBACK_ACTIONS, type CallbackAction } from '../shared/gateway/catalog';
import { actionOf, readCallbackBody, readGuard, reasonForLog, rejectedEvent, rejectRequest, type BodySource, type Rejection } from './callbackRequest';
import { DEFAULT_DUPLICATE_WINDOW_SECONDS, triggerProperties } from './description';
import { isFirstStart, reportIdentity } from './recentEvents';
import { checkPathToken, presentedToken, WEBHOOK_PATH } from './callbackUrl';
import { itemTime, notStartedWhileListening, receivedAt } from './listening';
import { sendOfReport } from './sendOfReport';
import { noteReview } from './reviewCatalogue';

const STARTED_ANSWER = { received: true, started: true };

/** The event name the workflow sees for each gateway action, and the output key of its object. */
const EVENTS: Record<CallbackAction, { event: string; key: string }> = {
	report: { event: 'report', key: 'report' },
	sign: { event: 'signature', key: 'signature' },
	template: { event: 'template', key: 'template' },
};

function isCallbackAction(value: unknown): value is CallbackAction {
	return typeof value === 'string' && (CALLBACK_ACTIONS as readonly string[]).includes(value);
}

export class DataGatewaySmsTrigger implements INodeType {
	description: INodeTypeDescription = {
		// 1.2: the URL Token in the URL path (the URLs n8n shows are complete), dates in China time.
		...nodeSkeleton('trigger', NODE_VERSIONS_TO_1_2),
		displayName: 'Data Gateway SMS Trigger',
		name: 'dataGatewaySmsTrigger',
		icon: { light: 'file:dataGatewaySmsTrigger.svg', dark: 'file:dataGatewaySmsTrigger.dark.svg' },
		group: ['trigger'],
		subtitle: '={{ $parameter["events"].map((event) => ({ report: "delivery report", sign: "signature review", template: "template review" })[event] ?? event).join(", ") }}',
		// n8n lists this node and Data Gateway SMS as one entry in the node creator, with this text: sending comes first, and it names no single node.
		description: 'Send SMS text messages (短信) and start workflows on their delivery reports and on signature and template review results',
		documentationUrl: readmeUrl('data-gateway-sms-trigger'),
		defaults: { name: 'Data Gateway SMS Trigger' },
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: WEBHOOK_PATH,
				// The answer to a callback that started the workflow; n8n sends it after saving the static data.
				responseData: `={{ ${JSON.stringify(STARTED_ANSWER)} }}`,
			},
		],
		properties: triggerProperties,
	};

	/** The gateway has no API for its callback URL: the user pastes it in the console, so there is nothing to register. */
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				checkPathToken(this);
				return true;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				checkPathToken(this);
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const response = this.getResponseObject();
		// n8n would answer 200 to anything; the node answers itself so rejects get 400, 401 or 403.
		const reply = (status: number, body: IDataObject): IWebhookResponseData => {
			response.status(status).json(body);
			return { noWebhookResponse: true };
		};
		const notStarted = (reason: string) => ({
			...reply(200, { received: true, started: false, reason }),
			workflowData: notStartedWhileListening(this, { reason, httpStatus: 200, action: actionOf(readBody) }),
		});
		const request = this.getRequestObject();
		const body: BodySource = { parsed: this.getBodyData(), rawBody: request.rawBody };
		// The gateway pushes each event once: a rejected one leaves a warning (never the body), and starts the workflow if asked.
		let readBody: unknown = body.parsed;
		const reject = (rejection: Rejection): IWebhookResponseData => {
			const action = actionOf(readBody);
			this.logger.warn(
				`Data Gateway SMS Trigger: rejected a callback with HTTP ${rejection.status}: ${reasonForLog(rejection.reason)}${action === undefined ? '' : ` (action ${JSON.stringify(action)})`}`,
				{ workflowId: this.getWorkflow().id, node: this.getNode().name, status: rejection.status },
			);
			const answered = reply(rejection.status, { error: rejection.reason });
			const options = this.getNodeParameter('options', {}) as IDataObject;
			if (rejection.status !== 400 || options.outputRejected !== true) {
				return { ...answered, workflowData: notStartedWhileListening(this, { reason: rejection.reason, httpStatus: rejection.status, action }) };
			}
			return { ...answered, workflowData: [this.helpers.returnJsonArray([{ ...rejectedEvent(rejection, body, action), receivedAt: receivedAt(this) }])] };
		};

		const guard = readGuard(this.getNodeParameter('security', {}) as IDataObject);
		if ('problem' in guard) {
			// A setting that cannot work: fail closed, and let n8n record the error where the user looks.
			throw new NodeOperationError(this.getNode(), `Security > ${guard.field} ${guard.problem}`, { description: guard.fix });
		}
		const rejection = rejectRequest(guard, {
			sourceAddress: request.ip ?? request.socket?.remoteAddress,
			query: { ...(this.getQueryData() as IDataObject), token: presentedToken(this) },
			headers: this.getHeaderData() as IDataObject,
		});
		if (rejection) return reject(rejection);

		const read = readCallbackBody(body);
		if ('status' in read) return reject(read);
		readBody = read.body;
		const { action } = read.body;
		if (action === undefined || action === null || action === '') return reject({ status: 400, reason: 'missing action' });
		if (!isCallbackAction(action)) return reject({ status: 400, reason: `unknown action ${JSON.stringify(action)}` });
		const parsed = callbackSchemas[action].safeParse(read.body);
		if (!parsed.success) return reject({ status: 400, reason: `invalid ${action} callback: ${describeSchemaProblem(parsed.error)}` });
		// Whether or not it starts the workflow, a review result is what the catalogue should show.
		if (parsed.data.action !== 'report') await noteReview(this, parsed.data.action, parsed.data.sign);

		const events = this.getNodeParameter('events', []) as string[];
		if (!events.includes(action)) return notStarted('event not selected');

		let object: IDataObject;
		let send: IDataObject = {};
		if (parsed.data.action === 'report') {
			// Looked up (and the report marked received) before the status filter: an unselected status was still received.
			const sendOf = await sendOfReport(this, parsed.data.sms);
			if (sendOf.caughtUp) return notStarted('already output by Check Pending Deliveries');
			send = sendOf.fields;
			if (typeof send.sentAt === 'string') send.sentAt = itemTime(this, new Date(send.sentAt));
			object = presentTask(parsed.data.sms);
			const wanted = this.getNodeParameter('reportStatuses', []) as string[];
			if (!wanted.includes(String(object.statusLabel))) return notStarted(`report status ${object.statusLabel} not selected`);
		} else {
			object = presentReviewed(parsed.data.sign);
			const wanted = this.getNodeParameter('reviewResults', []) as string[];
			if (!wanted.includes(String(object.statusLabel))) return notStarted(`review result ${object.statusLabel} not selected`);
		}

		const options = this.getNodeParameter('options', {}) as IDataObject;
		const windowSeconds = Number(options.duplicateWindowSeconds ?? DEFAULT_DUPLICATE_WINDOW_SECONDS);
		const eventKey = [this.getWorkflow().id, this.getNode().id, this.getMode(), action, object.id, object.status, ...(parsed.data.action === 'report' ? [reportIdentity(parsed.data.sms)] : [])].join('|');
		if (windowSeconds > 0 && !isFirstStart(this.getWorkflowStaticData('node'), eventKey, windowSeconds * 1000)) return notStarted('duplicate');

		const { event, key } = EVENTS[action];
		// Answered by n8n (the description's responseData), not here: it replies after saving the static data
		// above, so a repeat sent after this answer sees the event. webhookResponse is the same answer for callers that read it.
		return {
			webhookResponse: STARTED_ANSWER,
			workflowData: [this.helpers.returnJsonArray([{ event, action, [key]: object, ...send, receivedAt: receivedAt(this) }])],
		};
	}
}
