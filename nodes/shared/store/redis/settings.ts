/**
 * What the credential says about its Redis: the fields, the URL's parts, and the error that names
 * the field to fix. store/redis/connection.ts opens the connection.
 */
/** The credential fields a Redis failure can point at; messages name the one to fix. */
export const REDIS_URL_FIELD = 'Shared Redis URL for Limits and Send Records';
export const REDIS_PASSWORD_FIELD = 'Shared Redis Password';
export const REDIS_CA_FIELD = 'Shared Redis CA Certificate';

export interface RedisSettings extends ConnectionOptions {
	url: string;
	/** Overrides a password in the URL. */
	password?: string;
	/** Why these settings cannot be used (an n8n setting whose file cannot be read): each call fails with it. */
	unusable?: RedisUnavailable;
}

/**
 * How to open the connection beyond the URL: the credential's CA, and what n8n gives its own queue
 * Redis (store/redis/n8nSettings.ts).
 */
export interface ConnectionOptions {
	/** PEM certificate(s) of the CA that signed a rediss:// server's certificate, for a private or self-signed CA. */
	tlsCa?: string;
	/** The name the server's certificate is checked against (and sent as SNI), instead of the host. */
	tlsServerName?: string;
	/** false: the server's certificate is not checked (n8n's QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE=false). */
	tlsRejectUnauthorized?: boolean;
	/** The host's address family: 4 (IPv4 only), or 0 (either); unset, ioredis's own default (0 in the version here). */
	family?: 0 | 4;
	/** TCP keep-alive: the first probe after this many idle ms. */
	keepAliveMs?: number;
}

/** The credential's Redis, or undefined when its URL is empty (each process then keeps its own limits). */
export function redisSettingsFromCredentials(credentials: Record<string, unknown>): RedisSettings | undefined {
	const url = String(credentials.sharedLimitRedisUrl ?? '').trim();
	if (!url) return undefined;
	const password = String(credentials.sharedLimitRedisPassword ?? '');
	const tlsCa = String(credentials.sharedLimitRedisCa ?? '').trim();
	return { url, ...(password ? { password } : {}), ...(tlsCa ? { tlsCa } : {}) };
}

/** Redis cannot be used: a bad URL, unreachable, not Redis, refused login, malformed or late reply. */
export class RedisUnavailable extends Error {
	constructor(
		/** The credential field to fix. */
		readonly field: string,
		/** What went wrong, without the field; never holds the password. */
		readonly reason: string,
		/** Redis's own error when it answered but refused the command (a script error, OOM, NOPERM, a command it does not know). */
		readonly refusal?: string,
	) {
		super(`"${field}": ${reason}`);
		this.name = 'RedisUnavailable';
	}
}

export interface RedisTarget {
	host: string;
	port: number;
	tls: boolean;
	username?: string;
	password?: string;
	database: number;
}

/** `redis://` or `rediss://` (TLS), `[user[:password]@]host[:port][/db]`; anything else names the field. */
export function parseRedisUrl(text: string): RedisTarget {
	const fix = 'use redis://host:6379/0 or rediss://host:6380/0 (TLS), or clear the field';
	if (!URL.canParse(text)) throw new RedisUnavailable(REDIS_URL_FIELD, `not a URL; ${fix}`);
	const url = new URL(text);
	if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new RedisUnavailable(REDIS_URL_FIELD, `must start with redis:// or rediss://; ${fix}`);
	const path = url.pathname.replace(/^\/+|\/+$/g, '');
	const database = path === '' ? 0 : /^\d+$/.test(path) ? Number(path) : Number.NaN;
	if (!Number.isSafeInteger(database)) throw new RedisUnavailable(REDIS_URL_FIELD, 'the path must be a database number such as /0');
	const host = url.hostname.replace(/^\[|\]$/g, '');
	if (!host) throw new RedisUnavailable(REDIS_URL_FIELD, `has no host; ${fix}`);
	return {
		host,
		port: url.port ? Number(url.port) : 6379,
		tls: url.protocol === 'rediss:',
		username: url.username ? decodeURIComponent(url.username) : undefined,
		password: url.password ? decodeURIComponent(url.password) : undefined,
		database,
	};
}
