/**
 * A stand-in for an OpenAI-compatible chat model (POST /chat/completions, plain or streamed), for
 * n8n's AI Agent in the end-to-end tests. It follows a script: each turn asks for the tool calls
 * scripted for it, and after the last scripted turn it answers in words. It keeps every request as sent, so a test reads exactly what
 * n8n showed the model: the tools, their descriptions and their results.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tool call of a turn: the tool whose name matches `tool`, with these arguments. */
export interface ScriptedCall {
	tool: RegExp;
	args: Record<string, unknown>;
}

export interface ChatMessage {
	role: string;
	content?: unknown;
	tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
	tool_call_id?: string;
}

export interface ChatRequest {
	/** The body exactly as n8n sent it. */
	raw: string;
	messages: ChatMessage[];
	tools: Array<{ function: { name: string; description?: string; parameters?: unknown } }>;
}

export interface FakeChatModel {
	/** The base URL to put in n8n's OpenAI credential. */
	url: string;
	requests(): ChatRequest[];
	close(): Promise<void>;
}

export const FINAL_ANSWER = 'All done.';

function completion(message: Record<string, unknown>, finishReason: string) {
	return { id: 'chatcmpl-fake', object: 'chat.completion', created: 1, model: 'fake-model', choices: [{ index: 0, message, finish_reason: finishReason }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
}

/** The same answer as server-sent events, the way the API streams one. */
function streamed(response: ServerResponse, message: { content: string | null; tool_calls?: Array<Record<string, unknown>> }, finishReason: string) {
	response.writeHead(200, { 'content-type': 'text/event-stream' });
	const chunk = (delta: Record<string, unknown>, finish: string | null) =>
		`data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
	const toolCalls = message.tool_calls?.map((call, index) => ({ index, ...call }));
	response.write(chunk({ role: 'assistant', content: message.content ?? '', ...(toolCalls ? { tool_calls: toolCalls } : {}) }, null));
	response.write(chunk({}, finishReason));
	response.end('data: [DONE]\n\n');
}

function answer(request: ChatRequest, script: ScriptedCall[][]): { message: { role: string; content: string | null; tool_calls?: Array<Record<string, unknown>> }; finish: string } {
	// The turn: one past the last scripted turn whose calls the conversation holds (an agent may
	// replay parallel calls as one assistant message each, so messages are not counted).
	const turns = request.messages.flatMap((message) => message.tool_calls ?? []).map((call) => Number(/^call_(\d+)_/.exec(call.id)?.[1] ?? -1));
	const turn = Math.max(-1, ...turns) + 1;
	const calls = script[turn];
	if (!calls) return { message: { role: 'assistant', content: FINAL_ANSWER }, finish: 'stop' };
	const names = request.tools.map((tool) => tool.function.name);
	const toolCalls = calls.map((call, index) => {
		const name = names.find((candidate) => call.tool.test(candidate));
		if (!name) throw new Error(`no tool matching ${call.tool} among ${names.join(', ')}`);
		return { id: `call_${turn}_${index}`, type: 'function', function: { name, arguments: JSON.stringify(call.args) } };
	});
	return { message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish: 'tool_calls' };
}

async function bodyOf(request: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of request) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeChatModel(script: ScriptedCall[][]): Promise<FakeChatModel> {
	const seen: ChatRequest[] = [];
	const server = createServer((request, response) => {
		void (async () => {
			const raw = await bodyOf(request);
			if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
				response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `not served: ${request.method} ${request.url}` } }));
				return;
			}
			const body = JSON.parse(raw) as { messages?: ChatMessage[]; tools?: ChatRequest['tools']; stream?: boolean };
			const chat: ChatRequest = { raw, messages: body.messages ?? [], tools: body.tools ?? [] };
			seen.push(chat);
			try {
				const { message, finish } = answer(chat, script);
				if (body.stream) streamed(response, message, finish);
				else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(message, finish)));
			} catch (error) {
				response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: (error as Error).message } }));
			}
		})();
	});
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		requests: () => [...seen],
		close: async () => {
			server.closeAllConnections();
			await new Promise<void>((done) => server.close(() => done()));
		},
	};
}
