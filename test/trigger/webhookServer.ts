import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// n8n-core reads its user folder at import time, so point it at a throwaway folder first.
process.env.N8N_USER_FOLDER ??= mkdtempSync(join(tmpdir(), 'n8n-webhook-'));
process.env.N8N_LOG_LEVEL ??= 'silent';

import { HookContext, WebhookContext } from 'n8n-core';
import {
	NodeHelpers,
	Workflow,
	type IDataObject,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeType,
	type INodeTypes,
	type IWebhookData,
	type IWorkflowExecuteAdditionalData,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

/**
 * Serves a trigger node's webhook() over real HTTP through n8n-core's own WebhookContext, with the
 * request prepared as n8n's webhook route prepares it (cli: rawBodyReader, parseRequestBody for a
 * typeVersion 1 node, the express request) and the reply written as n8n writes it.
 */
export interface WebhookServer {
	url: string;
	/** workflowData of every webhook() call that started the workflow, in arrival order. */
	starts: INodeExecutionData[][][];
	/** Errors webhook() threw; n8n answers those with 500 and starts nothing the user built. */
	failures: Error[];
	/** What the node wrote to n8n's logger (this.logger), in order. */
	logs: Array<{ level: string; message: string; meta?: unknown }>;
	close(): Promise<void>;
}

export interface ServeOptions {
	/** 'webhook' serves the Production URL, 'manual' the Test URL. */
	mode?: WorkflowExecuteMode;
	/** The node's id in the workflow; the duplicate memory is keyed by it. A fresh one per server by default. */
	nodeId?: string;
	/** The workflow's static data, as n8n loads it from its database: pass one object to several servers to share it. */
	staticData?: IDataObject;
	/** The trigger's saved version; 1 by default. */
	typeVersion?: number;
}

const NODE_TYPE_PREFIX = 'CUSTOM.';
let serverCounter = 0;

function nodeTypesOf(type: INodeType): INodeTypes {
	const name = NODE_TYPE_PREFIX + type.description.name;
	const find = (wanted: string) => {
		if (wanted !== name) throw new Error(`Unknown node type ${wanted}`);
		return type;
	};
	return {
		getByName: find,
		getByNameAndVersion: (wanted, version) => NodeHelpers.getVersionedNodeType(find(wanted), version),
		getKnownTypes: () => ({}),
	};
}

/** n8n's rawBodyReader: content type without parameters, charset, and the raw bytes on demand. */
function prepareRequest(request: IncomingMessage, path: string) {
	const [mediaType, ...parameters] = String(request.headers['content-type'] ?? '').split(';');
	const charset = parameters.map((part) => part.trim().toLowerCase()).find((part) => part.startsWith('charset='));
	const url = new URL(request.url ?? '/', 'http://127.0.0.1');
	return Object.assign(request, {
		contentType: mediaType.trim().toLowerCase() || undefined,
		encoding: (charset?.slice('charset='.length) ?? 'utf-8') as BufferEncoding,
		body: undefined as unknown,
		// express, without 'trust proxy': the socket's address.
		ip: request.socket.remoteAddress,
		query: Object.fromEntries(url.searchParams) as IDataObject,
		params: {},
		path,
		async readRawBody() {
			if (request.rawBody) return;
			const chunks: Buffer[] = [];
			for await (const chunk of request) chunks.push(chunk as Buffer);
			request.rawBody = Buffer.concat(chunks);
		},
	});
}

class UnprocessableBody extends Error {}

/** n8n's parseBody (cli/middlewares/body-parser.ts), as run for a typeVersion 1 webhook node. */
async function parseBody(request: ReturnType<typeof prepareRequest>) {
	await request.readRawBody();
	const { rawBody, contentType, encoding } = request;
	if (!rawBody?.length) return;
	const text = rawBody.toString(encoding);
	try {
		if (contentType === 'application/json') request.body = JSON.parse(text);
		else if (contentType === 'application/x-www-form-urlencoded') request.body = Object.fromEntries(new URLSearchParams(text));
		else if (contentType === 'text/plain') request.body = text;
	} catch (error) {
		throw new UnprocessableBody((error as Error).message);
	}
}

/** The part of express' response a webhook node uses. */
function expressResponse(response: ServerResponse) {
	const reply = {
		get headersSent() {
			return response.headersSent;
		},
		status(code: number) {
			response.statusCode = code;
			return reply;
		},
		setHeader(name: string, value: string) {
			response.setHeader(name, value);
			return reply;
		},
		json(data: unknown) {
			response.setHeader('content-type', 'application/json; charset=utf-8');
			response.end(JSON.stringify(data));
			return reply;
		},
		send(data: unknown) {
			if (typeof data === 'object' && data !== null && !Buffer.isBuffer(data)) return reply.json(data);
			response.end(data as string | Buffer | undefined);
			return reply;
		},
		end(data?: string | Buffer) {
			response.end(data);
			return reply;
		},
	};
	return reply;
}

function answer(response: ServerResponse, status: number, body: IDataObject) {
	if (response.headersSent) return;
	response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
	response.end(JSON.stringify(body));
}

/** The node in its workflow, loaded as n8n loads a saved workflow (parameter defaults filled in). */
function workflowOf(type: INodeType, parameters: INodeParameters, options: ServeOptions) {
	const mode = options.mode ?? 'webhook';
	const webhookDescription = type.description.webhooks?.[0];
	if (!webhookDescription) throw new Error(`${type.description.name} has no webhook`);
	const node: INode = {
		id: options.nodeId ?? `trigger-${process.pid}-${++serverCounter}`,
		name: 'SMS Trigger',
		type: NODE_TYPE_PREFIX + type.description.name,
		typeVersion: options.typeVersion ?? 1,
		position: [0, 0],
		webhookId: 'b7f0c0de-0000-4000-8000-000000000001',
		parameters,
	};
	// The Workflow fills in parameter defaults from the node description, as n8n does on load.
	const workflow = new Workflow({
		id: 'workflow-1',
		name: 'SMS callbacks',
		nodes: [node],
		connections: {},
		active: mode === 'webhook',
		nodeTypes: nodeTypesOf(type),
		staticData: options.staticData ?? {},
		settings: { executionOrder: 'v1' },
	});
	// The path may be an expression of the node's parameters (the trigger's token from 1.2): resolved as n8n resolves it when it registers the webhook.
	const path = `${node.webhookId}/${String(workflow.expression.getSimpleParameterValue(node, webhookDescription.path, mode, {}))}`;
	return { mode, webhookDescription, node, workflow, path };
}

const ADDITIONAL_DATA = {
	variables: {},
	restApiUrl: 'http://127.0.0.1:5678/rest',
	instanceBaseUrl: 'http://127.0.0.1:5678/',
	webhookBaseUrl: 'http://127.0.0.1:5678/webhook',
	webhookTestBaseUrl: 'http://127.0.0.1:5678/webhook-test',
	webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhook-waiting',
	formWaitingBaseUrl: 'http://127.0.0.1:5678/form-waiting',
};

/**
 * Publishing the workflow (or listening on the Test URL), as n8n's createWebhookIfNotExists does:
 * the node's checkExists, then create, each with n8n-core's HookContext. Resolves to the path n8n
 * would register; rejects with what the node threw.
 */
export async function publishWebhook(type: INodeType, parameters: INodeParameters, options: ServeOptions = {}): Promise<string> {
	const { mode, webhookDescription, node, workflow, path } = workflowOf(type, parameters, options);
	const additionalData = ADDITIONAL_DATA as unknown as IWorkflowExecuteAdditionalData;
	const webhookData: IWebhookData = {
		httpMethod: 'POST',
		node: node.name,
		path,
		webhookDescription,
		workflowId: workflow.id,
		workflowExecuteAdditionalData: additionalData,
		webhookId: node.webhookId,
		isTest: mode === 'manual',
	};
	const methods = type.webhookMethods?.[webhookDescription.name];
	if (!methods) throw new Error(`${type.description.name} has no webhook methods`);
	const context = () => new HookContext(workflow, node, additionalData, mode, mode === 'manual' ? 'manual' : 'activate', webhookData);
	if (!(await methods.checkExists.call(context()))) await methods.create.call(context());
	return path;
}

export async function serveWebhook(type: INodeType, parameters: INodeParameters, options: ServeOptions = {}): Promise<WebhookServer> {
	const { mode, webhookDescription, node, workflow, path } = workflowOf(type, parameters, options);
	const starts: INodeExecutionData[][][] = [];
	const failures: Error[] = [];
	const logs: WebhookServer['logs'] = [];
	const logAt = (level: string) => (message: string, meta?: unknown) => logs.push({ level, message, meta });
	const logger = { error: logAt('error'), warn: logAt('warn'), info: logAt('info'), debug: logAt('debug') };

	const server: Server = createServer(async (incoming, response) => {
		const request = prepareRequest(incoming, path);
		try {
			await parseBody(request);
		} catch (error) {
			if (!(error instanceof UnprocessableBody)) throw error;
			return answer(response, 422, { code: 422, message: 'Failed to parse request body', hint: error.message });
		}
		const additionalData = {
			httpRequest: request,
			httpResponse: expressResponse(response),
			...ADDITIONAL_DATA,
		} as unknown as IWorkflowExecuteAdditionalData;
		const webhookData: IWebhookData = {
			httpMethod: 'POST',
			node: node.name,
			path,
			webhookDescription,
			workflowId: workflow.id,
			workflowExecuteAdditionalData: additionalData,
			webhookId: node.webhookId,
			isTest: mode === 'manual',
		};
		const context = new WebhookContext(workflow, node, additionalData, mode, webhookData, [], null);
		// n8n's logger, as the node sees it (this.logger), recorded for the test.
		Object.defineProperty(context, 'logger', { value: logger });
		try {
			const result = await type.webhook!.call(context);
			if (result.workflowData) starts.push(result.workflowData);
			// handleImmediateWebhookResponse: a node that answered itself says noWebhookResponse.
			if (result.noWebhookResponse) return;
			answer(response, 200, (result.webhookResponse as IDataObject | undefined) ?? { message: result.workflowData ? 'Workflow was started' : 'Webhook call received' });
		} catch (error) {
			failures.push(error as Error);
			answer(response, 500, { code: 500, message: 'Workflow Webhook Error: Workflow could not be started!' });
		}
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const base = mode === 'manual' ? 'webhook-test' : 'webhook';
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/${base}/${path}`,
		starts,
		failures,
		logs,
		close: () => new Promise((resolve) => server.close(() => resolve())),
	};
}
