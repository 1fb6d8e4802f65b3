import type { IncomingMessage, ServerResponse } from 'node:http';

import { json } from './http';

/**
 * `misshapen`: the gateway answers as usual (code 0, billed) but `data` arrives as JSON text
 * instead of an object, as a gateway that changed its format might send it.
 * `resetAfterBilling`, `hangAfterBilling`: the gateway does the call (and bills it) and the answer
 * is lost: the connection closes, or the answer never comes.
 * `trickle`: a good answer, one byte every `intervalMs`; `endless`: a body that never ends;
 * `huge`: a 200 of `sizeBytes`, with its length announced or (`chunked`) not.
 */
export type FaultKind =
	| '500'
	| '502'
	| '429'
	| 'reset'
	| 'malformed'
	| 'html'
	| 'truncated'
	| 'hang'
	| 'echo'
	| 'misshapen'
	| 'resetAfterBilling'
	| 'hangAfterBilling'
	| 'trickle'
	| 'endless'
	| 'huge';

/** Faults that come after the gateway did the call: the request is processed (and billed) first. */
export const AFTER_PROCESSING: ReadonlySet<FaultKind> = new Set(['misshapen', 'resetAfterBilling', 'hangAfterBilling']);

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
	/** `trickle` and `endless`: the pause between bytes or chunks (default 400 ms and 50 ms). */
	intervalMs?: number;
	/** `huge`: the body's size in bytes (default 9 MiB); `chunked` leaves its length unannounced. */
	sizeBytes?: number;
	chunked?: boolean;
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
		case 'hangAfterBilling':
			return; // never answers; the client's timeout must fire
		case 'resetAfterBilling':
			return response.socket?.destroy();
		case 'trickle': {
			const body = Buffer.from('{"code":0,"message":"success","data":{"phone":"13800138000","province":"北京"}}');
			response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
			return writeEvery(response, step.intervalMs ?? 400, (index) => (index < body.length ? body.subarray(index, index + 1) : undefined));
		}
		case 'endless':
			response.writeHead(200, { 'content-type': 'application/json' });
			response.write('{"code":0,"message":"success","data":{"list":[');
			return writeEvery(response, step.intervalMs ?? 50, () => '"more",');
		case 'huge': {
			const size = step.sizeBytes ?? 9 * 1024 * 1024;
			response.writeHead(200, { 'content-type': 'application/json', ...(step.chunked ? {} : { 'content-length': String(size) }) });
			const chunk = Buffer.alloc(64 * 1024, 0x20);
			let written = 0;
			// Written as fast as the client reads: the body is sent whole only if it is read whole.
			const more = () => {
				while (written < size && !response.destroyed) {
					const part = chunk.subarray(0, Math.min(chunk.length, size - written));
					written += part.length;
					if (!response.write(part)) return void response.once('drain', more);
				}
				if (!response.destroyed) response.end();
			};
			return more();
		}
	}
}

/** Writes `next(index)` every `intervalMs` until it gives nothing (then ends) or the client goes. */
function writeEvery(response: ServerResponse, intervalMs: number, next: (index: number) => Buffer | string | undefined) {
	let index = 0;
	const timer = setInterval(() => {
		const part = next(index++);
		if (part === undefined) {
			clearInterval(timer);
			response.end();
		} else response.write(part);
	}, intervalMs);
	timer.unref();
	response.on('close', () => clearInterval(timer));
}
