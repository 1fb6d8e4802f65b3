import type { IncomingMessage, ServerResponse } from 'node:http';

import { json } from './http';

/**
 * `misshapen`: the gateway answers as usual (code 0, billed) but `data` arrives as JSON text
 * instead of an object, as a gateway that changed its format might send it.
 */
export type FaultKind = '500' | '502' | '429' | 'reset' | 'malformed' | 'html' | 'truncated' | 'hang' | 'echo' | 'misshapen';

export interface FaultStep {
	kind: FaultKind;
	/** How many matching requests get this fault (default 1). */
	count?: number;
	retryAfterSeconds?: number;
	/** Only requests to this path; every gateway path when absent. */
	path?: string;
	/** Lets this many matching requests through untouched before the fault applies. */
	skip?: number;
	/**
	 * `echo`: a 500 whose text body is this many filler characters, then the request line and the
	 * Authorization header, as careless gateways and proxies write them; `cutAt` shortens that body.
	 */
	fillerChars?: number;
	cutAt?: number;
}

export interface Faults {
	latencyMs?: number;
	sequence?: FaultStep[];
	/** Above this many requests per second per appCode, answer 429 with Retry-After. */
	rateCapPerSecond?: number;
	/** The window of the rate cap (default 1000 ms); a long one lets tests hit the cap without racing the clock. */
	rateCapWindowMs?: number;
}

/** The faults in force: the sequence is consumed step by step, the rate cap counts per account. */
export class FaultState {
	private faults: Faults = {};
	private readonly acceptedTimes = new Map<string, number[]>();

	get latencyMs(): number | undefined {
		return this.faults.latencyMs;
	}

	/** Copies the steps: their counts are consumed here, not in the caller's object. */
	set(next: Faults) {
		this.faults = { ...next, sequence: next.sequence?.map((step) => ({ ...step })) };
	}

	clear() {
		this.faults = {};
		this.acceptedTimes.clear();
	}

	take(path: string): FaultStep | undefined {
		const step = this.faults.sequence?.find((candidate) => (candidate.count ?? 1) > 0 && (!candidate.path || candidate.path === path));
		if (!step) return undefined;
		if (step.skip) {
			step.skip--;
			return undefined;
		}
		step.count = (step.count ?? 1) - 1;
		return step;
	}

	/** Seconds to put in Retry-After when this account is over the cap; undefined when the request may pass. */
	overRateCap(account: string): number | undefined {
		const cap = this.faults.rateCapPerSecond;
		if (!cap) return undefined;
		const windowMs = this.faults.rateCapWindowMs ?? 1000;
		const now = Date.now();
		const times = (this.acceptedTimes.get(account) ?? []).filter((time) => now - time < windowMs);
		this.acceptedTimes.set(account, times);
		if (times.length >= cap) return Math.max(1, Math.ceil((times[0] + windowMs - now) / 1000));
		times.push(now);
		return undefined;
	}
}

export function writeFault(step: FaultStep, request: IncomingMessage, response: ServerResponse) {
	switch (step.kind) {
		case 'echo': {
			const echoed = `${'.'.repeat(step.fillerChars ?? 0)}${request.method} ${request.url} Authorization: ${request.headers.authorization ?? ''}`;
			response.writeHead(500, { 'content-type': 'text/plain' });
			return response.end(step.cutAt === undefined ? echoed : echoed.slice(0, step.cutAt));
		}
		case '500':
			return json(response, 500, { code: 500, message: 'internal error' });
		case '502':
			response.writeHead(502, { 'content-type': 'text/html' });
			return response.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
		case '429':
			return json(response, 429, { code: 429, message: 'too many requests' }, { 'retry-after': String(step.retryAfterSeconds ?? 1) });
		case 'reset':
			return response.socket?.destroy();
		case 'malformed':
			response.writeHead(200, { 'content-type': 'application/json' });
			return response.end('{"code":0,"message":"success","data":{"phone":');
		case 'html':
			response.writeHead(200, { 'content-type': 'text/html' });
			return response.end('<!DOCTYPE html><html><body>Service temporarily unavailable</body></html>');
		case 'truncated':
			response.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
			response.write('{"code":0,"message":"success","data":{');
			return setTimeout(() => response.socket?.destroy(), 20).unref();
		case 'hang':
			return; // never answers; the client's timeout must fire
	}
}
