import { createHash, timingSafeEqual } from 'crypto';
import type {
	IDataObject,
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { cidrContains, parseAddress, parseAllowList } from '../shared/checks/network';
import { mainConnection } from '../shared/description';
import { describeSchemaProblem } from '../shared/schemas/envelope';
import { callbackSchemas } from '../shared/schemas/callbacks';
import { withIsoTimes } from '../shared/simplify';
import {
	CALLBACK_EVENT_HEADER,
	CALLBACK_EVENT_HEADER_VALUE,
	REVIEW_STATUS,
	REVIEW_STATUS_LABELS,
	SMS_TASK_STATUS,
	SMS_TASK_STATUS_LABELS,
} from '../shared/spec';

/** The gateway's action, the event name the workflow sees, and the output key of its object. */
const EVENTS = {
	report: { event: 'report', key: 'report' },
	sign: { event: 'signature', key: 'signature' },
	template: { event: 'template', key: 'template' },
} as const;
type Action = keyof typeof EVENTS;

/** Recently started events, per workflow and node, to start once when the same event comes twice. */
const recentEvents = new Map<string, number>();

function remember(key: string, windowMs: number): boolean {
	const now = Date.now();
	for (const [seen, expiresAt] of recentEvents) if (expiresAt <= now) recentEvents.delete(seen);
	if (recentEvents.has(key)) return false;
	recentEvents.set(key, now + windowMs);
	return true;
}

/** Compares secrets in constant time, whatever their lengths. */
function sameSecret(given: string, expected: string): boolean {
	const digest = (text: string) => createHash('sha256').update(text).digest();
	return timingSafeEqual(digest(given), digest(expected));
}

function headerValue(headers: IDataObject, name: string): string | undefined {
	const value = headers[name.toLowerCase()];
	return Array.isArray(value) ? String(value[0]) : value === undefined ? undefined : String(value);
}

export class DataGatewaySmsTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Data Gateway SMS Trigger',
		name: 'dataGatewaySmsTrigger',
		icon: { light: 'file:dataGatewaySmsTrigger.svg', dark: 'file:dataGatewaySmsTrigger.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{ $parameter["events"].join(", ") }}',
		description: 'Starts a workflow on SMS delivery reports and on signature and template review results',
		defaults: { name: 'Data Gateway SMS Trigger' },
		inputs: [],
		outputs: mainConnection,
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'data-gateway-sms' }],
		properties: [
			{
				displayName:
					'Paste this node\'s Production URL (Webhook URLs above) into the gateway\'s SMS send settings as the callback URL, then activate the workflow. The Test URL only listens while you click "Listen for test event" in the editor, so do not leave it in the gateway.',
				name: 'setupNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName:
					'The gateway pushes each event only once. Events missed while the workflow was inactive are not resent: fetch them with the Data Gateway SMS node (Message > Get Status, Signature > Get, Template > Get).',
				name: 'onceNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				required: true,
				default: ['report', 'sign', 'template'],
				options: [
					{ name: 'Delivery Report', value: 'report', description: 'An SMS reached its final status' },
					{ name: 'Signature Review', value: 'sign', description: 'A signature review ended' },
					{ name: 'Template Review', value: 'template', description: 'A template review ended' },
				],
			},
			{
				displayName: 'Report Statuses',
				name: 'reportStatuses',
				type: 'multiOptions',
				default: ['delivered', 'failed'],
				description: 'Which delivery results start the workflow',
				options: [
					{ name: 'Delivered', value: 'delivered' },
					{ name: 'Failed', value: 'failed' },
				],
				displayOptions: { show: { events: ['report'] } },
			},
			{
				displayName: 'Review Results',
				name: 'reviewResults',
				type: 'multiOptions',
				default: ['approved', 'rejected'],
				description: 'Which review results start the workflow',
				options: [
					{ name: 'Approved', value: 'approved' },
					{ name: 'Rejected', value: 'rejected' },
				],
				displayOptions: { show: { events: ['sign', 'template'] } },
			},
			{
				displayName: 'Security',
				name: 'security',
				type: 'collection',
				placeholder: 'Add Check',
				default: {},
				description: 'The gateway does not sign its callbacks, so choose one or more checks of your own',
				options: [
					{
						displayName: 'Allowed Source IPs',
						name: 'allowedIps',
						type: 'string',
						default: '',
						placeholder: '203.0.113.0/24, 2001:db8::/32',
						description:
							'Comma-separated addresses or CIDR ranges the callbacks may come from; others get 403. Behind a reverse proxy, set N8N_PROXY_HOPS so n8n sees the real source address.',
					},
					{
						displayName: 'Header Name',
						name: 'headerName',
						type: 'string',
						default: '',
						placeholder: 'X-Callback-Secret',
						description: 'A header every callback must carry, with the value below; otherwise 401',
					},
					{
						displayName: 'Header Value',
						name: 'headerValue',
						type: 'string',
						typeOptions: { password: true },
						default: '',
					},
					{
						displayName: 'URL Token',
						name: 'token',
						type: 'string',
						typeOptions: { password: true },
						default: '',
						description: 'A secret the callback URL must carry as ?token=…; add it to the URL you paste into the gateway. Otherwise 401.',
					},
				],
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Duplicate Window (Seconds)',
						name: 'duplicateWindowSeconds',
						type: 'number',
						typeOptions: { minValue: 0 },
						default: 600,
						description:
							'The same event (action, ID and status) arriving again within this time starts nothing. Remembered per n8n process; 0 turns it off.',
					},
				],
			},
		],
	};

	/** The gateway has no API for its callback URL: the user pastes it in the console, so there is nothing to register. */
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const response = this.getResponseObject();
		const reply = (status: number, body: IDataObject): IWebhookResponseData => {
			response.status(status).json(body);
			return { noWebhookResponse: true };
		};
		const request = this.getRequestObject();
		const headers = this.getHeaderData() as IDataObject;
		const security = this.getNodeParameter('security', {}) as IDataObject;

		const allowList = String(security.allowedIps ?? '').trim();
		if (allowList) {
			const { ranges } = parseAllowList(allowList);
			const source = parseAddress(String(request.ip ?? request.socket?.remoteAddress ?? ''));
			if (!source || !ranges.some((range) => cidrContains(range, source))) return reply(403, { error: 'source address not allowed' });
		}
		const token = String(security.token ?? '');
		if (token && !sameSecret(String((this.getQueryData() as IDataObject).token ?? ''), token)) return reply(401, { error: 'missing or wrong token' });
		const headerName = String(security.headerName ?? '').trim();
		if (headerName) {
			const given = headerValue(headers, headerName);
			if (given === undefined || !sameSecret(given, String(security.headerValue ?? ''))) return reply(401, { error: `missing or wrong ${headerName} header` });
		}
		const eventHeader = headerValue(headers, CALLBACK_EVENT_HEADER);
		if (eventHeader !== undefined && eventHeader.toLowerCase() !== CALLBACK_EVENT_HEADER_VALUE) {
			return reply(400, { error: `unexpected ${CALLBACK_EVENT_HEADER} header` });
		}

		let body: unknown = this.getBodyData();
		// n8n may hand over an empty body when the JSON did not parse; the raw bytes tell.
		const raw = (request as { rawBody?: Buffer }).rawBody;
		if (raw && raw.length > 0 && (!body || Object.keys(body as object).length === 0)) {
			try {
				body = JSON.parse(raw.toString('utf8'));
			} catch {
				return reply(400, { error: 'body is not valid JSON' });
			}
		}
		if (!body || typeof body !== 'object' || Array.isArray(body)) return reply(400, { error: 'body must be a JSON object' });
		const action = (body as IDataObject).action;
		if (action === undefined) return reply(400, { error: 'missing action' });
		if (typeof action !== 'string' || !(action in callbackSchemas)) return reply(400, { error: `unknown action ${JSON.stringify(action)}` });
		const parsed = callbackSchemas[action as Action].safeParse(body);
		if (!parsed.success) return reply(400, { error: `invalid ${action} callback: ${describeSchemaProblem(parsed.error)}` });

		const events = this.getNodeParameter('events', []) as string[];
		if (!events.includes(action)) return reply(200, { received: true, started: false, reason: 'event not selected' });

		let object: IDataObject;
		let status: number;
		if (parsed.data.action === 'report') {
			const { reveiveDate, receiveDate, ...task } = parsed.data.sms;
			status = task.status;
			const wanted = this.getNodeParameter('reportStatuses', []) as string[];
			const label = SMS_TASK_STATUS_LABELS[String(status)] ?? 'unknown';
			if (status === SMS_TASK_STATUS.sending || !wanted.includes(label)) return reply(200, { received: true, started: false, reason: `status ${label} not selected` });
			object = withIsoTimes({ ...task, receiveDate: receiveDate ?? reveiveDate ?? null, statusLabel: label }, ['sendDate', 'receiveDate']) as IDataObject;
		} else {
			const reviewed = parsed.data.sign;
			status = reviewed.status;
			const wanted = this.getNodeParameter('reviewResults', []) as string[];
			const label = REVIEW_STATUS_LABELS[String(status)] ?? 'unknown';
			if (status === REVIEW_STATUS.underReview || !wanted.includes(label)) return reply(200, { received: true, started: false, reason: `result ${label} not selected` });
			object = withIsoTimes({ ...reviewed, statusLabel: label }, ['create_time', 'update_time']) as IDataObject;
		}

		const windowSeconds = Number((this.getNodeParameter('options', {}) as IDataObject).duplicateWindowSeconds ?? 600);
		const identity = `${this.getWorkflow().id}|${this.getNode().id}|${action}|${object.id}|${status}`;
		if (windowSeconds > 0 && !remember(identity, windowSeconds * 1000)) {
			return reply(200, { received: true, started: false, reason: 'duplicate' });
		}

		const { event, key } = EVENTS[action as Action];
		response.status(200).json({ received: true, started: true });
		return {
			noWebhookResponse: true,
			workflowData: [this.helpers.returnJsonArray([{ event, action, [key]: object, receivedAt: new Date().toISOString() }])],
		};
	}
}
