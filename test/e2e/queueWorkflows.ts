/**
 * Workflows and credentials the queue-mode suite and the queue-mode benchmark import into n8n.
 * Node types carry the package name, as they do after a Community Nodes install.
 */
import { NODE_TYPE_PREFIX } from '../../scripts/n8n-runtime';

export const MEMBER_CREDENTIAL_ID = 'dgwQueueMember';
export const GATEWAY_CAP_PER_SECOND = 20;

export interface GatewayCredentialOptions {
	id?: string;
	gatewayUrl: string;
	appCode: string;
	maxPerSecond: number;
	/** The credential's Shared Redis URL for Limits and Send Records; per-process limits when absent. */
	sharedLimitRedisUrl?: string;
}

export function gatewayCredential(options: GatewayCredentialOptions) {
	return {
		id: options.id ?? MEMBER_CREDENTIAL_ID,
		name: `Data Gateway (${options.id ?? MEMBER_CREDENTIAL_ID})`,
		type: 'dataGatewayApi',
		data: {
			appCodeSecret: options.appCode,
			baseUrl: options.gatewayUrl,
			appCodePlacement: 'query',
			maxPerSecond: options.maxPerSecond,
			// A credential with a Redis of its own keeps its account's opt-out list and budgets there; this
			// suite's credentials share one App Code across stores, so each such one is named an Account of
			// its own (docs/credential.md#account): else the others would refuse, naming that Redis (issue 41).
			...(options.sharedLimitRedisUrl ? { sharedLimitRedisUrl: options.sharedLimitRedisUrl, account: options.id ?? MEMBER_CREDENTIAL_ID } : {}),
		},
	};
}

const credentialsOf = (id = MEMBER_CREDENTIAL_ID) => ({ dataGatewayApi: { id, name: `Data Gateway (${id})` } });

function webhookNode(path: string) {
	return {
		id: `${path}-in`,
		name: 'Phones In',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: `${path}-hook`,
		// Answers with every item of the last node once the worker has finished.
		parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
	};
}

const splitNode = {
	id: 'split',
	name: 'One Item per Phone',
	type: 'n8n-nodes-base.splitOut',
	typeVersion: 1,
	position: [220, 0],
	parameters: { fieldToSplitOut: 'body.phones', options: {} },
};

/** Webhook -> one item per phone -> `identify` (named Identify): the shape both lookup variants share. */
function phoneLookupWorkflow(id: string, name: string, path: string, identify: Record<string, unknown>) {
	return {
		id,
		name,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [webhookNode(path), splitNode, { id: 'identify', name: 'Identify', position: [440, 0], onError: 'continueRegularOutput', ...identify }],
		connections: {
			'Phones In': { main: [[{ node: 'One Item per Phone', type: 'main', index: 0 }]] },
			'One Item per Phone': { main: [[{ node: 'Identify', type: 'main', index: 0 }]] },
		},
	};
}

/** POST {phones: [{phone}]} to `webhook/<path>`: this package's Telephone node identifies each number. */
export function lookupWorkflow(id: string, path: string, credentialId?: string) {
	return phoneLookupWorkflow(id, `Queue: telephone lookups (${path})`, path, {
		type: `${NODE_TYPE_PREFIX}dataGatewayTelephone`,
		typeVersion: 1,
		parameters: { phoneNumber: '={{ $json.phone }}', simplify: true },
		credentials: credentialsOf(credentialId),
	});
}

/** The same calls made by n8n's HTTP Request node, for the benchmark's peer CPU figure. */
export function httpRequestLookupWorkflow(id: string, path: string, gatewayUrl: string, appCode: string) {
	return phoneLookupWorkflow(id, `Queue: HTTP Request lookups (${path})`, path, {
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			url: `${gatewayUrl}/telecom/identify`,
			sendQuery: true,
			queryParameters: { parameters: [{ name: 'tel', value: '={{ $json.phone }}' }, { name: 'appCode', value: appCode }] },
			options: {},
		},
	});
}

export const TRIGGER_WEBHOOK_ID = 'dgw-queue-trigger-hook';

/** The SMS Trigger alone: every start is an execution to count. */
export function triggerWorkflow(id: string) {
	return {
		id,
		name: 'Queue: SMS delivery reports',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'trigger',
				name: 'Delivery Report',
				type: `${NODE_TYPE_PREFIX}dataGatewaySmsTrigger`,
				typeVersion: 1,
				position: [0, 0],
				webhookId: TRIGGER_WEBHOOK_ID,
				parameters: { events: ['report'], reportStatuses: ['delivered', 'failed'], options: { duplicateWindowSeconds: 600 } },
			},
		],
		connections: {},
	};
}

export const triggerPath = `webhook/${TRIGGER_WEBHOOK_ID}/data-gateway-sms`;

/** `count` (under 404, the emulator's not-found marker) distinct mobile numbers starting with `prefix` (3 digits). */
export function distinctPhones(prefix: string, count: number): Array<{ phone: string }> {
	if (count >= 404) throw new Error('distinctPhones: fewer than 404 numbers, or one of them contains 404 and the emulator answers not found');
	return Array.from({ length: count }, (_, index) => ({ phone: `${prefix}${String(index).padStart(8, '0')}` }));
}

/** POST {phones: [{phone}]} to `webhook/<path>`: this package's SMS node sends one text per number (with the member credential unless `credentialId`). */
export function smsWorkflow(id: string, path: string, signId: number, templateId: number, credentialId?: string) {
	return {
		id,
		name: `Queue: SMS send (${path})`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{ ...webhookNode(path), parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} } },
			splitNode,
			{
				id: 'send',
				name: 'Send',
				type: `${NODE_TYPE_PREFIX}dataGatewaySms`,
				typeVersion: 1,
				position: [440, 0],
				parameters: {
					resource: 'message',
					operation: 'send',
					signId,
					templateId,
					phone: '={{ $json.phone }}',
					variablesInput: 'keyValue',
					variables: {},
					sendOptions: { repeatWindowMinutes: 10 },
				},
				credentials: credentialsOf(credentialId),
			},
		],
		connections: {
			'Phones In': { main: [[{ node: 'One Item per Phone', type: 'main', index: 0 }]] },
			'One Item per Phone': { main: [[{ node: 'Send', type: 'main', index: 0 }]] },
		},
	};
}

/**
 * POST {phones: [{phone, code}]} to `webhook/<path>`: the SMS node texts each number the template
 * with its code (the answer is the node's output when `answerWhenDone`, else at once), at most 2 a minute per number, and skips a message another execution sent
 * within 10 minutes.
 */
export function smsRoundsWorkflow(id: string, path: string, signId: number, templateId: number, { answerWhenDone = false, credentialId }: { answerWhenDone?: boolean; credentialId?: string } = {}) {
	const workflow = smsWorkflow(id, path, signId, templateId, credentialId);
	const [webhook, split, send] = workflow.nodes;
	return {
		...workflow,
		name: `Queue: SMS send rounds (${path})`,
		nodes: [
			// Answering when done gives the caller the node's output items.
			answerWhenDone ? webhookNode(path) : webhook,
			split,
			{
				...send,
				parameters: {
					...send.parameters,
					variables: { variable: [{ name: 'code', value: '={{ $json.code }}' }] },
					sendOptions: { repeatWindowMinutes: 10, perMinute: 2 },
				},
			},
		],
	};
}
