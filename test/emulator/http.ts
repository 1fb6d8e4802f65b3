import type { IncomingMessage, ServerResponse } from 'node:http';

export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
	const text = JSON.stringify(body);
	response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
	response.end(text);
}

export async function readBody(request: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of request) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks).toString('utf8');
}

/** The appCode from the query or from an `Authorization: AppCode …` header (the credential's "Send App Code As"; docs/gateway-api.md#conventions). */
export function appCodeOf(request: IncomingMessage, query: URLSearchParams): string | undefined {
	const header = request.headers.authorization;
	const fromHeader = header?.match(/^AppCode\s+(.+)$/i)?.[1];
	return query.get('appCode') ?? fromHeader ?? undefined;
}
