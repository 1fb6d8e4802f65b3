import type { IDataObject } from 'n8n-workflow';

import { OPERATIONS, type OperationName } from '../gateway/catalog';
import { readHttpAnswer, type AttemptResult } from './answer';
import { seconds, type MakeFailure } from './failure';
import { AttemptDeadline } from './deadline';
import { ANSWER_TOO_LARGE, exchange, ExchangeFailed, MAX_ANSWER_BYTES, NEVER_SENT, type GatewayExchange } from './pool';
import type { GatewaySettings } from './settings';

/** A query value: objects (the `params` of SMS send) travel as JSON text. Empty values are left out. */
export type QueryValue = string | number | boolean | IDataObject | null | undefined;

export function buildQueryString(params: Record<string, QueryValue>): string {
	// Built as one string, without arrays: this runs twice for every item (its sharing key and its request).
	let query = '';
	for (const name of Object.keys(params)) {
		const value = params[name];
		if (value === undefined || value === null || value === '') continue;
		const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
		query += `${query === '' ? '' : '&'}${encodeURIComponent(name)}=${encodeURIComponent(text)}`;
	}
	return query;
}

/** Connection errors that prove the request never reached the gateway. */
const NOT_SENT_ERROR_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

const TIMEOUT_ERROR_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** What a connection error means, in words first; its code follows in parentheses for searching. */
const CONNECTION_PROBLEMS: Record<string, string> = {
	ECONNRESET: 'the connection was closed by the gateway before it answered',
	UND_ERR_SOCKET: 'the connection was closed by the gateway before it answered',
	EPIPE: 'the connection was closed by the gateway before it answered',
	ECONNREFUSED: 'the gateway refused the connection: nothing answers at the host and port of the Base URL',
	ENOTFOUND: 'the host name of the Base URL could not be found (DNS)',
	EAI_AGAIN: 'the host name of the Base URL could not be looked up just now (DNS)',
	UND_ERR_CONNECT_TIMEOUT: 'the connection to the gateway could not be opened in time',
	ETIMEDOUT: 'the connection to the gateway could not be opened in time',
	EHOSTUNREACH: 'the gateway cannot be reached from this network',
	ENETUNREACH: 'the gateway cannot be reached from this network',
};

export function connectionProblem(code: string | undefined, error: unknown): string {
	const known = code !== undefined && Object.hasOwn(CONNECTION_PROBLEMS, code) ? CONNECTION_PROBLEMS[code] : undefined;
	if (known) return `${known} (${code})`;
	const detail = code ?? (error instanceof Error && error.message ? error.message : 'unknown error');
	return `the connection to the gateway failed (${detail})`;
}

function errorCode(error: unknown): string | undefined {
	const withCode = error as { code?: string; cause?: { code?: string } } | undefined;
	return withCode?.code ?? withCode?.cause?.code;
}

/** One HTTP request to the gateway and what became of it; the client decides whether to try again. */
export class GatewayAttempts {
	/** What every request of the client shares, made on its first request: the gateway's origin, the path before each operation's, the headers, the appCode as a query parameter. */
	private fixed?: { origin: string; path: string; headers: Record<string, string>; appCodeQuery: string };

	constructor(
		private readonly settings: GatewaySettings,
		private readonly fail: MakeFailure,
	) {}

	private shared() {
		if (!this.fixed) {
			const url = new URL(this.settings.baseUrl);
			const inHeader = this.settings.appCodePlacement === 'header';
			const headers: Record<string, string> = inHeader ? { accept: 'application/json', authorization: `AppCode ${this.settings.appCode}` } : { accept: 'application/json' };
			this.fixed = { origin: url.origin, path: url.pathname.replace(/\/+$/, ''), headers, appCodeQuery: inHeader ? '' : buildQueryString({ appCode: this.settings.appCode }) };
		}
		return this.fixed;
	}

	async run(
		operation: OperationName,
		params: Record<string, QueryValue>,
		signal: AbortSignal | undefined,
		timeoutMs: number,
	): Promise<AttemptResult> {
		const { idempotent, path } = OPERATIONS[operation];
		const deadline = new AttemptDeadline(timeoutMs, signal);
		let answer: GatewayExchange;
		try {
			// Inside the try: a Base URL that is not a URL fails here, as a failed attempt.
			const fixed = this.shared();
			const own = buildQueryString(params);
			// The appCode goes last, as if it were the last of the params.
			const query = own && fixed.appCodeQuery ? `${own}&${fixed.appCodeQuery}` : own || fixed.appCodeQuery;
			answer = await exchange(
				{ origin: fixed.origin, path: `${fixed.path}${path}${query ? `?${query}` : ''}`, headers: fixed.headers },
				(abort) => deadline.attach(abort),
			);
		} catch (error) {
			const failed = error instanceof ExchangeFailed ? error : undefined;
			const cause = failed ? failed.reason : error;
			if (failed?.statusCode === undefined) return this.transportError(operation, cause, idempotent, signal, timeoutMs, deadline.expired);
			// The answer had begun.
			if (errorCode(cause) === ANSWER_TOO_LARGE) return this.tooLarge(operation, failed.statusCode);
			if (deadline.expired || errorCode(cause) === 'UND_ERR_BODY_TIMEOUT' || signal?.aborted) {
				return this.transportError(operation, cause, idempotent, signal, timeoutMs, true);
			}
			return {
				retryable: false,
				mayBeBilled: true,
				failure: this.fail(operation, 'not-json', `the gateway's answer (HTTP ${failed.statusCode}) was cut off before it was complete`, {
					httpStatus: failed.statusCode,
					hint: 'The call reached the gateway, so it is not repeated automatically. Run the item again if needed.',
				}),
			};
		} finally {
			deadline.clear();
		}
		return readHttpAnswer(this.fail, this.settings.appCode, operation, answer.statusCode, answer.headers, answer.text);
	}

	/** An answer above MAX_ANSWER_BYTES: not read further, and (the call reached the gateway) not repeated. */
	private tooLarge(operation: OperationName, statusCode: number): AttemptResult {
		return {
			retryable: false,
			mayBeBilled: true,
			failure: this.fail(
				operation,
				'not-json',
				`the gateway's answer (HTTP ${statusCode}) is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MB, far above any real answer; it was not read further`,
				{
					httpStatus: statusCode,
					hint: 'Check the Base URL in the credential: it must be the API root. The call reached the gateway, so it is not repeated automatically.',
				},
			),
		};
	}

	private transportError(
		operation: OperationName,
		error: unknown,
		idempotent: boolean,
		cancelSignal: AbortSignal | undefined,
		timeoutMs: number,
		deadlinePassed: boolean,
	): AttemptResult {
		if (cancelSignal?.aborted) {
			return { retryable: false, mayBeBilled: true, failure: this.fail(operation, 'cancelled', 'the execution was cancelled') };
		}
		const code = errorCode(error);
		if (code === 'ERR_INVALID_URL') {
			return {
				retryable: false,
				mayBeBilled: false,
				failure: this.fail(operation, 'network', `the Base URL "${this.settings.baseUrl}" is not a valid URL`, {
					hint: 'Set the Base URL in the credential to the API root, e.g. https://gateway.example.com',
				}),
			};
		}
		if (code === NEVER_SENT) {
			// Ended before its request was written: the connection or the proxy's tunnel never opened.
			return {
				retryable: true,
				mayBeBilled: false,
				failure: this.fail(operation, 'not-sent', `not sent: no connection to the gateway within ${seconds(timeoutMs)} s, so the request was never sent`, {
					hint: 'Nothing reached the gateway; running the item again sends it. Check the Base URL in the credential, the network and any HTTP_PROXY / HTTPS_PROXY / NO_PROXY settings, or raise "Timeout (Seconds)".',
				}),
			};
		}
		const timedOut = deadlinePassed || (code !== undefined && TIMEOUT_ERROR_CODES.has(code));
		const reason = timedOut ? `no answer within ${seconds(timeoutMs)} s` : connectionProblem(code, error);
		const neverSent = !timedOut && code !== undefined && NOT_SENT_ERROR_CODES.has(code);
		if (!idempotent && !neverSent) {
			return {
				retryable: false,
				mayBeBilled: true,
				failure: this.fail(operation, 'outcome-unknown', `${reason}; the request may have reached the gateway`, {
					hint: 'It was not repeated, to avoid doing it twice. Check whether it took effect before running it again.',
				}),
			};
		}
		return {
			retryable: true,
			mayBeBilled: !neverSent,
			failure: this.fail(operation, timedOut ? 'timeout' : 'network', reason, {
				hint: timedOut
					? 'Raise "Timeout (Seconds)" in the credential if the gateway is slow.'
					: 'Check the Base URL in the credential, the network and any HTTP_PROXY / HTTPS_PROXY / NO_PROXY settings.',
			}),
		};
	}
}
