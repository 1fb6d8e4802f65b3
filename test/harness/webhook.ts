import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IDataObject, INode, INodeExecutionData, INodeType, IWebhookFunctions } from 'n8n-workflow';

/**
 * Serves a trigger node's webhook() over real HTTP the way n8n does: the body is parsed as JSON
 * when it can be (and kept raw as `rawBody`), the node gets the request, headers, query and its
 * parameters, and either writes the reply itself (noWebhookResponse) or n8n answers 200.
 */
export interface WebhookServer {
	url: string;
	/** Workflow starts produced so far: one entry per webhook() call that returned workflowData. */
	starts: INodeExecutionData[][][];
	close(): Promise<void>;
}

function readParameter(parameters: IDataObject, name: string, fallback: unknown) {
	let value: unknown = parameters;
	for (const part of name.split('.')) value = (value as IDataObject | undefined)?.[part];
	return value === undefined ? fallback : value;
}

export async function serveWebhook(type: INodeType, parameters: IDataObject, nodeId = 'trigger-1'): Promise<WebhookServer> {
	const starts: INodeExecutionData[][][] = [];
	const node = { id: nodeId, name: 'Trigger', type: 'CUSTOM.trigger', typeVersion: 1, position: [0, 0], parameters } as INode;

	const server: Server = createServer(async (request: IncomingMessage, response) => {
		const chunks: Buffer[] = [];
		for await (const chunk of request) chunks.push(chunk as Buffer);
		const rawBody = Buffer.concat(chunks);
		let body: IDataObject = {};
		try {
			body = rawBody.length ? JSON.parse(rawBody.toString('utf8')) : {};
		} catch {
			body = {};
		}
		const url = new URL(request.url ?? '/', 'http://localhost');
		let status = 200;
		const expressLikeResponse = {
			status(code: number) {
				status = code;
				return expressLikeResponse;
			},
			json(data: unknown) {
				response.writeHead(status, { 'content-type': 'application/json' });
				response.end(JSON.stringify(data));
				return expressLikeResponse;
			},
		};
		const expressLikeRequest = Object.assign(request, { rawBody, body, ip: request.socket.remoteAddress, query: Object.fromEntries(url.searchParams) });
		const context = {
			getBodyData: () => body,
			getHeaderData: () => request.headers,
			getQueryData: () => Object.fromEntries(url.searchParams),
			getRequestObject: () => expressLikeRequest,
			getResponseObject: () => expressLikeResponse,
			getNodeParameter: (name: string, fallback?: unknown) => readParameter(parameters, name, fallback),
			getNode: () => node,
			getWorkflow: () => ({ id: 'workflow-1', name: 'Trigger test', active: true }),
			getWebhookName: () => 'default',
			getMode: () => 'webhook',
			helpers: { returnJsonArray: (items: IDataObject[]) => items.map((json) => ({ json })) },
		} as unknown as IWebhookFunctions;
		try {
			const result = await type.webhook!.call(context);
			if (result.workflowData) starts.push(result.workflowData);
			if (!result.noWebhookResponse) {
				response.writeHead(200, { 'content-type': 'application/json' });
				response.end(JSON.stringify(result.webhookResponse ?? { message: 'Workflow was started' }));
			}
		} catch (error) {
			response.writeHead(500, { 'content-type': 'application/json' });
			response.end(JSON.stringify({ message: (error as Error).message }));
		}
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook/data-gateway-sms`,
		starts,
		close: () => new Promise((resolve) => server.close(() => resolve())),
	};
}
