import { createHash } from 'crypto';
import type { ICredentialDataDecryptedObject, IDataObject, Logger } from 'n8n-workflow';
// eslint-disable-next-line @n8n/community-nodes/no-restricted-imports -- the design card names undici as the HTTP client
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';
import type { z } from 'zod/v4';

import { GatewayFailure, type GatewayFailureKind } from './errors';
import { DEFAULT_LIMITER_SETTINGS, GatewayLimiter, LimiterWaitTooLong, limiterFor, type LimiterSettings } from './limiter';
import { REDIS_URL_FIELD, RedisUnavailable, redisSettingsFromCredentials } from './redis';
import { redactSecret, rememberSecret } from './redact';
import { describeSchemaProblem, envelopeSchema } from './schemas/envelope';
import { abortableSleep } from './sleep';
import { OPERATIONS, type OperationName } from './spec';

export type AppCodePlacement = 'query' | 'header';

export interface GatewaySettings {
	baseUrl: string;
	appCode: string;
	appCodePlacement: AppCodePlacement;
	timeoutMs: number;
	/** Extra attempts after the first, for idempotent operations only. */
	maxRetries: number;
	limiter: LimiterSettings;
	/** The credential's spending cap per execution in yuan; 0 means none. */
	maxSpendYuan: number;
}

export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_MAX_RETRIES = 3;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 10_000;
/** A Retry-After longer than this fails the item instead of stalling the execution. */
const MAX_RETRY_AFTER_MS = 60_000;
/** The least time left for which a retry is still made. */
const MIN_ATTEMPT_MS = 500;

function positiveNumber(value: unknown, fallback: number): number {
	const number = Number(value);
	return Number.isFinite(number) && number >= 0 ? number : fallback;
}

/** Reads the credential's fields; the credential type defines them and their defaults. */
export function settingsFromCredentials(credentials: ICredentialDataDecryptedObject): GatewaySettings {
	const timeoutMs = positiveNumber(credentials.timeoutSeconds, DEFAULT_TIMEOUT_SECONDS) * 1000 || DEFAULT_TIMEOUT_SECONDS * 1000;
	return {
		baseUrl: String(credentials.baseUrl ?? '').trim().replace(/\/+$/, ''),
		appCode: String(credentials.appCodeSecret ?? '').trim(),
		appCodePlacement: credentials.appCodePlacement === 'header' ? 'header' : 'query',
		timeoutMs,
		maxRetries: Math.min(10, Math.floor(positiveNumber(credentials.maxRetries, DEFAULT_MAX_RETRIES))),
		maxSpendYuan: positiveNumber(credentials.maxSpendPerExecution, 0),
		limiter: {
			maxConcurrent: Math.max(1, Math.floor(positiveNumber(credentials.maxConcurrent, DEFAULT_LIMITER_SETTINGS.maxConcurrent))),
			maxPerSecond: positiveNumber(credentials.maxPerSecond, DEFAULT_LIMITER_SETTINGS.maxPerSecond),
			sharedRedis: redisSettingsFromCredentials(credentials),
			timeoutMs,
		},
	};
}

/** A query value: objects (the `params` of SMS send) travel as JSON text. Empty values are left out. */
export type QueryValue = string | number | boolean | IDataObject | null | undefined;

export interface CallOptions {
	signal?: AbortSignal;
	logger?: Logger;
}

export interface GatewayAnswer<T> {
	data: T;
	message: string;
	attempts: number;
}

let sharedDispatcher: Dispatcher | undefined;

const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'];

/**
 * Keep-alive pool that follows HTTP_PROXY, HTTPS_PROXY and NO_PROXY, created on first use. Without
 * a proxy variable it is a plain pool: the proxy-aware one re-reads NO_PROXY on every request.
 */
function dispatcher(): Dispatcher {
	if (!sharedDispatcher) {
		const pool = { keepAliveTimeout: 30_000, connections: 64 };
		// eslint-disable-next-line @n8n/community-nodes/no-restricted-globals -- the same variables EnvHttpProxyAgent reads
		sharedDispatcher = PROXY_VARIABLES.some((name) => process.env[name]) ? new EnvHttpProxyAgent(pool) : new Agent(pool);
	}
	return sharedDispatcher;
}

/** Drops pooled connections so that changed proxy variables take effect (used by tests and tools). */
export async function resetConnectionPool(): Promise<void> {
	const previous = sharedDispatcher;
	sharedDispatcher = undefined;
	await previous?.close();
}

export function buildQueryString(params: Record<string, QueryValue>): string {
	const parts: string[] = [];
	for (const [name, value] of Object.entries(params)) {
		if (value === undefined || value === null || value === '') continue;
		const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
		parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`);
	}
	return parts.join('&');
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
	const known = code === undefined ? undefined : CONNECTION_PROBLEMS[code];
	if (known) return `${known} (${code})`;
	const detail = code ?? (error instanceof Error && error.message ? error.message : 'unknown error');
	return `the connection to the gateway failed (${detail})`;
}

function errorCode(error: unknown): string | undefined {
	const withCode = error as { code?: string; cause?: { code?: string } } | undefined;
	return withCode?.code ?? withCode?.cause?.code;
}

interface AttemptResult {
	failure?: GatewayFailure;
	retryable: boolean;
	envelope?: z.infer<typeof envelopeSchema>;
}

function parseRetryAfter(header: string | string[] | undefined): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (!value) return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function backoffDelay(attempt: number): number {
	// Full jitter keeps parallel items from retrying in lockstep.
	const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
	return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

function looksLikeHtml(text: string) {
	return /^\s*</.test(text);
}

function seconds(ms: number): string {
	return String(Math.round(ms / 100) / 10);
}

function plural(count: number, noun: string) {
	return count === 1 ? noun : `${noun}s`;
}

const RATE_LIMITED_HINT = 'The gateway is rate-limiting this appCode. Lower "Max Requests per Second" in the credential, or run the item again later.';

/** Shortens text that has already been redacted: a cut must not leave part of the appCode. */
function shorten(text: string, max = 200) {
	const flat = text.replace(/\s+/g, ' ').trim();
	return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/**
 * The only place that talks HTTP to the gateway: limiter, timeout, retries for idempotent
 * operations, envelope and schema checks, and redaction of the appCode from every text it makes.
 */
export class GatewayClient {
	readonly settings: GatewaySettings;
	private readonly limiter: GatewayLimiter;

	/** Identifies the account without holding the appCode itself. */
	readonly accountKey: string;

	/**
	 * `ownLimiter` gives the client a limiter of its own instead of the credential's shared one:
	 * the credential test must answer at once, never wait behind a pause other calls caused.
	 */
	constructor(settings: GatewaySettings, { ownLimiter = false }: { ownLimiter?: boolean } = {}) {
		this.settings = settings;
		rememberSecret(settings.appCode);
		this.limiter = ownLimiter ? new GatewayLimiter(settings.limiter) : limiterFor(settings.baseUrl, settings.appCode, settings.limiter);
		this.accountKey = createHash('sha256').update(`${settings.baseUrl}\n${settings.appCode}`).digest('hex').slice(0, 16);
	}

	/** Same key for the same question to the same account: used to ask (and pay) only once. */
	questionKey(operation: OperationName, params: Record<string, QueryValue>): string {
		return `${this.accountKey}|${operation}|${buildQueryString(params)}`;
	}

	/**
	 * One item's call. The credential's Timeout bounds it whole, retries and waits included: the
	 * clock starts when the first attempt gets its turn, each attempt gets what is left, and a
	 * retry happens only while time remains for it. Waiting for a turn before the first attempt
	 * (concurrency, rate, a pause after a 429) is not counted.
	 */
	async call<Schema extends z.ZodType>(
		operation: OperationName,
		params: Record<string, QueryValue>,
		schema: Schema,
		options: CallOptions = {},
	): Promise<GatewayAnswer<z.output<Schema>>> {
		const { idempotent } = OPERATIONS[operation];
		const maxAttempts = idempotent ? 1 + this.settings.maxRetries : 1;
		const budgetMs = this.settings.timeoutMs;
		// A retry that could get only a sliver of time would be paid for and cut off: it is not made.
		const minAttemptMs = Math.min(MIN_ATTEMPT_MS, budgetMs / 4);
		let deadline: number | undefined;
		let lastFailure: GatewayFailure | undefined;

		for (let attempt = 1; ; attempt++) {
			let release: () => void;
			try {
				release = await this.limiter.acquire(options.signal, deadline === undefined ? undefined : deadline - minAttemptMs);
			} catch (error) {
				// The wait ends early only for a cancelled execution, or for a retry (there is a deadline only
				// after the first attempt) that the limiter would start too late: the last failure stands.
				if (error instanceof LimiterWaitTooLong && lastFailure && deadline !== undefined) {
					throw this.finalFailure(lastFailure, attempt - 1, budgetMs, deadline);
				}
				throw this.notSent(operation, error, options.signal);
			}
			if (options.signal?.aborted) {
				release();
				throw this.notSent(operation, undefined, options.signal);
			}
			deadline ??= Date.now() + budgetMs;
			let result: AttemptResult;
			try {
				result = await this.attempt(operation, params, options, Math.max(1, deadline - Date.now()));
			} finally {
				release();
			}

			if (result.envelope) {
				this.limiter.onAccepted();
				return this.readEnvelope(operation, result.envelope, schema, attempt);
			}
			const failure = result.failure as GatewayFailure;
			lastFailure = failure;
			const retryAfterMs = failure.httpStatus === 429 ? failure.retryAfterMs : undefined;
			// The shared pause never outlasts what a call would wait for: one long Retry-After must not stall the credential.
			if (failure.httpStatus === 429) this.limiter.onThrottled(Math.min(retryAfterMs ?? backoffDelay(attempt), this.maxWaitMs()));
			else this.limiter.onAccepted();

			const left = deadline - Date.now();
			if (retryAfterMs !== undefined && retryAfterMs > Math.min(left, MAX_RETRY_AFTER_MS) && result.retryable) {
				throw this.failure(
					operation,
					failure.kind,
					`${failure.message}; it asked to wait ${seconds(retryAfterMs)} s (Retry-After), longer than this item may wait (Timeout ${seconds(budgetMs)} s, at most ${MAX_RETRY_AFTER_MS / 1000} s)`,
					{ httpStatus: failure.httpStatus, retryAfterMs, hint: failure.hint },
				);
			}
			const wait = retryAfterMs ?? backoffDelay(attempt);
			if (!result.retryable || attempt >= maxAttempts || wait + minAttemptMs > left) {
				throw this.finalFailure(failure, attempt, budgetMs, deadline);
			}
			options.logger?.debug(
				redactSecret(
					`Data Gateway: ${OPERATIONS[operation].label} attempt ${attempt} failed (${failure.kind}${failure.httpStatus ? ` ${failure.httpStatus}` : ''}); retrying in ${wait} ms`,
					this.settings.appCode,
				),
			);
			try {
				await abortableSleep(wait, options.signal);
			} catch {
				throw this.failure(operation, 'cancelled', 'the execution was cancelled');
			}
		}
	}

	/**
	 * A failure before the request was written: the limiter, the shared limit's Redis, or a
	 * cancellation before dispatch. Nothing reached the gateway, so the item may be run again.
	 */
	private notSent(operation: OperationName, error: unknown, signal: AbortSignal | undefined): GatewayFailure {
		if (signal?.aborted) {
			return this.failure(operation, 'not-sent', 'not sent: the execution was cancelled before the request left', {
				hint: 'Nothing reached the gateway; running the item again sends it.',
			});
		}
		if (error instanceof RedisUnavailable) {
			return this.failure(operation, 'not-sent', `not sent: ${error.message}`, {
				hint: `Nothing reached the gateway. Fix "${error.field}" in the credential and run the item again, or clear "${REDIS_URL_FIELD}" to limit each n8n process on its own.`,
			});
		}
		const detail = error instanceof Error && error.message ? error.message : String(error);
		return this.failure(operation, 'not-sent', `not sent: waiting for a turn with this credential failed (${detail})`, {
			hint: 'Nothing reached the gateway; running the item again sends it.',
		});
	}

	/** The longest a call waits between attempts, and so the longest the shared pause after a 429 lasts. */
	private maxWaitMs() {
		return Math.min(MAX_RETRY_AFTER_MS, this.settings.timeoutMs);
	}

	/** The last failure of an item, saying how many attempts were made over how long. */
	private finalFailure(failure: GatewayFailure, attempts: number, budgetMs: number, deadline: number): GatewayFailure {
		if (failure.kind === 'timeout') {
			return this.failure(failure.operation, 'timeout', `no answer after ${attempts} ${plural(attempts, 'attempt')} over ${seconds(budgetMs)} s`, {
				hint: failure.hint,
			});
		}
		if (attempts === 1) return failure;
		const elapsedMs = budgetMs - Math.max(0, deadline - Date.now());
		return this.failure(failure.operation, failure.kind, `${failure.message} (${attempts} attempts over ${seconds(elapsedMs)} s)`, {
			httpStatus: failure.httpStatus,
			gatewayCode: failure.gatewayCode,
			retryAfterMs: failure.retryAfterMs,
			hint: failure.hint,
		});
	}

	/** The gateway's origin and the path before each operation's, parsed once per client. */
	private base?: { origin: string; path: string };

	private target(operation: OperationName, params: Record<string, QueryValue>): { origin: string; path: string } {
		if (!this.base) {
			const url = new URL(this.settings.baseUrl);
			this.base = { origin: url.origin, path: url.pathname.replace(/\/+$/, '') };
		}
		const query = buildQueryString(
			this.settings.appCodePlacement === 'query' ? { ...params, appCode: this.settings.appCode } : params,
		);
		return { origin: this.base.origin, path: `${this.base.path}${OPERATIONS[operation].path}${query ? `?${query}` : ''}` };
	}

	private failure(
		operation: OperationName,
		kind: GatewayFailureKind,
		message: string,
		extra: { httpStatus?: number; gatewayCode?: number; retryAfterMs?: number; hint?: string } = {},
	): GatewayFailure {
		const secret = this.settings.appCode;
		return new GatewayFailure({
			kind,
			operation,
			message: redactSecret(message, secret),
			...extra,
			hint: extra.hint === undefined ? undefined : redactSecret(extra.hint, secret),
		});
	}

	private async attempt(
		operation: OperationName,
		params: Record<string, QueryValue>,
		options: CallOptions,
		timeoutMs: number,
	): Promise<AttemptResult> {
		const { idempotent } = OPERATIONS[operation];
		const headers: Record<string, string> = { accept: 'application/json' };
		if (this.settings.appCodePlacement === 'header') headers.authorization = `AppCode ${this.settings.appCode}`;

		let statusCode: number;
		let responseHeaders: Record<string, string | string[] | undefined>;
		let text: string;
		try {
			// undici's own timeouts, rather than a timer signal per request: this runs for every item.
			const response = await dispatcher().request({
				...this.target(operation, params),
				method: 'GET',
				headers,
				signal: options.signal,
				headersTimeout: timeoutMs,
				bodyTimeout: timeoutMs,
			});
			statusCode = response.statusCode;
			responseHeaders = response.headers;
			try {
				text = await response.body.text();
			} catch (error) {
				if (errorCode(error) === 'UND_ERR_BODY_TIMEOUT') return this.transportError(operation, error, idempotent, options.signal, timeoutMs);
				return {
					retryable: false,
					failure: this.failure(operation, 'not-json', `the gateway's answer (HTTP ${statusCode}) was cut off before it was complete`, {
						httpStatus: statusCode,
						hint: 'The call reached the gateway, so it is not repeated automatically. Run the item again if needed.',
					}),
				};
			}
		} catch (error) {
			return this.transportError(operation, error, idempotent, options.signal, timeoutMs);
		}

		if (statusCode < 200 || statusCode > 299) {
			const retryable = statusCode >= 500 || statusCode === 429;
			const detail = looksLikeHtml(text) ? 'an HTML error page' : shorten(redactSecret(text, this.settings.appCode)) || 'an empty body';
			return {
				retryable,
				failure: this.failure(operation, 'http-status', `the gateway answered HTTP ${statusCode} with ${detail}`, {
					httpStatus: statusCode,
					retryAfterMs: statusCode === 429 ? parseRetryAfter(responseHeaders['retry-after']) : undefined,
					hint:
						statusCode === 429
							? RATE_LIMITED_HINT
							: statusCode >= 500
								? 'The gateway had an internal problem. Try again later.'
								: undefined,
				}),
			};
		}

		let json: unknown;
		try {
			json = JSON.parse(text);
		} catch {
			const what = looksLikeHtml(text)
				? 'an HTML page instead of JSON'
				: text.trim() === ''
					? 'an empty body instead of JSON'
					: 'JSON that is malformed or cut off';
			return {
				retryable: false,
				failure: this.failure(operation, 'not-json', `the gateway answered HTTP ${statusCode} with ${what}`, {
					httpStatus: statusCode,
					hint: 'Check the Base URL in the credential: it must be the API root. A proxy or captive portal can also answer with an HTML page.',
				}),
			};
		}
		const envelope = envelopeSchema.safeParse(json);
		if (!envelope.success) {
			return {
				retryable: false,
				failure: this.failure(operation, 'schema', `the gateway's answer is not the expected envelope: ${describeSchemaProblem(envelope.error)}`, {
					httpStatus: statusCode,
				}),
			};
		}
		return { retryable: false, envelope: envelope.data };
	}

	private transportError(
		operation: OperationName,
		error: unknown,
		idempotent: boolean,
		cancelSignal: AbortSignal | undefined,
		timeoutMs: number,
	): AttemptResult {
		if (cancelSignal?.aborted) {
			return { retryable: false, failure: this.failure(operation, 'cancelled', 'the execution was cancelled') };
		}
		const code = errorCode(error);
		if (code === 'ERR_INVALID_URL') {
			return {
				retryable: false,
				failure: this.failure(operation, 'network', `the Base URL "${this.settings.baseUrl}" is not a valid URL`, {
					hint: 'Set the Base URL in the credential to the API root, e.g. https://gateway.example.com',
				}),
			};
		}
		const timedOut = code !== undefined && TIMEOUT_ERROR_CODES.has(code);
		const reason = timedOut ? `no answer within ${seconds(timeoutMs)} s` : connectionProblem(code, error);
		const neverSent = !timedOut && code !== undefined && NOT_SENT_ERROR_CODES.has(code);
		if (!idempotent && !neverSent) {
			return {
				retryable: false,
				failure: this.failure(operation, 'outcome-unknown', `${reason}; the request may have reached the gateway`, {
					hint: 'It was not repeated, to avoid doing it twice. Check whether it took effect before running it again.',
				}),
			};
		}
		return {
			retryable: true,
			failure: this.failure(operation, timedOut ? 'timeout' : 'network', reason, {
				hint: timedOut
					? 'Raise "Timeout (Seconds)" in the credential if the gateway is slow.'
					: 'Check the Base URL in the credential, the network and any HTTP_PROXY / HTTPS_PROXY / NO_PROXY settings.',
			}),
		};
	}

	private readEnvelope<Schema extends z.ZodType>(
		operation: OperationName,
		envelope: z.infer<typeof envelopeSchema>,
		schema: Schema,
		attempts: number,
	): GatewayAnswer<z.output<Schema>> {
		const message = envelope.message ?? '';
		if (envelope.code !== 0) {
			throw this.failure(operation, 'gateway-code', message || 'no message', {
				gatewayCode: envelope.code,
				hint: 'The gateway refused the request. Its code and message say why; check the input values and the account.',
			});
		}
		const data = schema.safeParse(envelope.data);
		if (!data.success) {
			throw this.failure(operation, 'schema', `the answer does not have the expected shape: ${describeSchemaProblem(data.error, 'data')}`, {
				hint: 'The gateway may have changed its response format. Report this with the field named above.',
			});
		}
		return { data: data.data, message, attempts };
	}
}
