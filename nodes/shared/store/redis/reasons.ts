/**
 * Words for what went wrong with a Redis connection, and the cancellation of a call; used by
 * store/redis/connection.ts.
 */
import { REDIS_CA_FIELD, REDIS_PASSWORD_FIELD, REDIS_URL_FIELD, type RedisTarget } from './settings';

/** The words for a connection error: what it most likely means, then its code. */
export function connectionReason(error: Error | undefined, where: string, target: RedisTarget, connectMs: number): { field: string; reason: string } {
	const code = (error as { code?: string } | undefined)?.code;
	const text = error?.message ?? 'the connection closed';
	if (/WRONGPASS|NOAUTH|invalid password|invalid username|AUTH\b/i.test(text)) {
		return { field: REDIS_PASSWORD_FIELD, reason: `Redis at ${where} refused the login (${text.split('\n')[0].slice(0, 120)}); check the password and the URL's user name` };
	}
	if (/DB index|invalid DB|SELECT/i.test(text)) return { field: REDIS_URL_FIELD, reason: `Redis at ${where} refused database ${target.database} (${text.slice(0, 120)})` };
	if (code === 'ECONNREFUSED') return { field: REDIS_URL_FIELD, reason: `nothing answers at ${where} (ECONNREFUSED); check the host and port` };
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { field: REDIS_URL_FIELD, reason: `the host of ${where} could not be found (${code})` };
	const tlsHint = target.tls ? 'if it is not a TLS port, use redis://' : 'if it is a TLS port, use rediss://';
	if (code === 'ETIMEDOUT') return { field: REDIS_URL_FIELD, reason: `no connection to ${where} within ${connectMs / 1000} s (ETIMEDOUT); ${tlsHint}` };
	if (/Command timed out/i.test(text)) return { field: REDIS_URL_FIELD, reason: `${where} accepted the connection but did not answer as Redis in time; ${tlsHint}` };
	const tlsProblem = /certificate|self.signed|CERT_|DEPTH_ZERO|UNABLE_TO|altnames/i.test(`${code ?? ''} ${text}`);
	if (tlsProblem) {
		return { field: REDIS_CA_FIELD, reason: `the TLS certificate of ${where} was not accepted (${code ?? text.slice(0, 120)}); give the CA that signed it, or check the host name` };
	}
	const detail = (code ?? text).replace(/\s*Please report this\.?/, '').slice(0, 120);
	return { field: REDIS_URL_FIELD, reason: `${where} did not answer as Redis (${detail}); ${tlsHint}` };
}

/** The reason a cancelled call rejects with: the signal's own, as abortableSleep does. */
export function cancelReason(signal: AbortSignal): unknown {
	return signal.reason ?? new Error('Cancelled');
}

/** Rejects with the signal's reason when the execution is cancelled; `done` removes the listener. */
export function cancellation(signal: AbortSignal | undefined): { cancelled: Promise<never>; done: () => void } {
	if (!signal) return { cancelled: new Promise<never>(() => undefined), done: () => undefined };
	let onAbort: () => void = () => undefined;
	const cancelled = new Promise<never>((_resolve, reject) => {
		onAbort = () => reject(cancelReason(signal));
		signal.addEventListener('abort', onAbort, { once: true });
	});
	cancelled.catch(() => undefined);
	return { cancelled, done: () => signal.removeEventListener('abort', onAbort) };
}
