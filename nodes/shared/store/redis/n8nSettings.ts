/**
 * n8n's own queue Redis, read from n8n's settings as n8n's config package (@n8n/config 1.65 in n8n
 * 1.123, 2.39 in n8n 2.41) reads them, so that the store connects where n8n connects:
 * - a variable that is set wins, even when empty; else `<NAME>_FILE` names a file whose content,
 *   trimmed, is the value (Docker secrets); the host side (hostEnvironment.ts) does that reading;
 * - text: outer spaces and one pair of matching quotes dropped;
 * - a number: JavaScript's Number() of the value; blank or not a number keeps the default;
 * - a flag: `true` or `1` on, `false` or `0` off, in any letter case; anything else keeps the default;
 * - EXECUTIONS_MODE: `queue` or `regular`, else regular.
 * Then the connection as n8n's RedisClientService opens it: TLS with the server name and
 * certificate check of QUEUE_BULL_REDIS_TLS_SERVERNAME and _TLS_VALIDATE_CERTIFICATE (n8n 2.x; n8n
 * 1.x has neither and always checks), IPv4 only unless QUEUE_BULL_REDIS_DUALSTACK, TCP keep-alive
 * with QUEUE_BULL_REDIS_KEEP_ALIVE. Not used: a Redis Cluster (QUEUE_BULL_REDIS_CLUSTER_NODES with
 * a node in it), as the store's scripts need all their keys on one server.
 */
import { RedisUnavailable, type RedisSettings } from './settings';

/** A setting's raw value as n8n takes it (the variable, else its `_FILE`), or undefined when neither is set. */
export type SettingReader = (name: string) => string | undefined;

/** A `_FILE` that names a file that cannot be read: n8n itself stops at start on it. */
export class UnreadableSetting extends Error {
	constructor(
		readonly variable: string,
		reason: string,
	) {
		super(reason);
		this.name = 'UnreadableSetting';
	}
}

/** What n8n makes of a text setting: trimmed, and one pair of quotes around the whole dropped. */
export function settingText(raw: string): string {
	const value = raw.trim();
	const quote = value.charAt(0);
	const quoted = value.length >= 2 && (quote === '"' || quote === "'") && value.endsWith(quote);
	// n8n's pattern does not reach over a line break, so a value with one keeps its quotes.
	return quoted && !/[\n\r\u2028\u2029]/.test(value) ? value.slice(1, -1) : value;
}

/** What n8n makes of a number setting; `fallback` when blank or not a number. */
export function settingNumber(raw: string | undefined, fallback: number): number {
	if (raw === undefined || settingText(raw) === '') return fallback;
	const value = Number(raw);
	return Number.isNaN(value) ? fallback : value;
}

/** What n8n makes of a flag: true/1 and false/0 in any case (not trimmed); `fallback` otherwise. */
export function settingFlag(raw: string | undefined, fallback: boolean): boolean {
	const value = raw?.toLowerCase();
	if (value === 'true' || value === '1') return true;
	if (value === 'false' || value === '0') return false;
	return fallback;
}

const Q = 'QUEUE_BULL_REDIS_';

/**
 * The queue Redis when this n8n runs in queue mode with a single Redis, else undefined. A setting
 * whose file cannot be read, or a value no connection can use, gives settings that fail every
 * call with a message naming the variable (the SMS node then sends nothing).
 */
export function queueRedisFrom(read: SettingReader): RedisSettings | undefined {
	try {
		const text = (name: string, fallback = '') => {
			const raw = read(name);
			return raw === undefined ? fallback : settingText(raw);
		};
		if (text('EXECUTIONS_MODE') !== 'queue') return undefined;
		if (text(`${Q}CLUSTER_NODES`).split(',').some((node) => node.trim() !== '')) return undefined;
		return queueTarget(text, (name, fallback) => settingNumber(read(name), fallback), (name, fallback) => settingFlag(read(name), fallback));
	} catch (error) {
		if (error instanceof UnreadableSetting) return unusable(`${error.variable}_FILE`, error.message);
		return unusable(`${Q}*`, `could not be read (${error instanceof Error ? error.message : String(error)})`);
	}
}

function queueTarget(
	text: (name: string, fallback?: string) => string,
	number: (name: string, fallback: number) => number,
	flag: (name: string, fallback: boolean) => boolean,
): RedisSettings {
	// An empty host is what the socket takes as localhost.
	const host = text(`${Q}HOST`) || 'localhost';
	const port = number(`${Q}PORT`, 6379);
	const database = number(`${Q}DB`, 0);
	if (!Number.isInteger(port) || port < 1 || port > 65_535) return unusable(`${Q}PORT`, `is ${port}, not a port number`);
	if (!Number.isSafeInteger(database) || database < 0) return unusable(`${Q}DB`, `is ${database}, not a database number`);
	const username = text(`${Q}USERNAME`);
	const password = text(`${Q}PASSWORD`);
	const tls = flag(`${Q}TLS`, false);
	const user = username ? `${encodeURIComponent(username)}@` : '';
	const url = `${tls ? 'rediss' : 'redis'}://${user}${host.includes(':') ? `[${host}]` : host}:${port}/${database}`;
	// A character that would end the host inside a URL: the connection would go elsewhere.
	if (/[\s/?#@[\]\\%]/.test(host) || !URL.canParse(url)) return unusable(`${Q}HOST`, `is "${host}", not a host name or address`);
	const serverName = text(`${Q}TLS_SERVERNAME`);
	const keepAliveMs = flag(`${Q}KEEP_ALIVE`, false) ? Math.max(0, number(`${Q}KEEP_ALIVE_DELAY`, 5_000)) : undefined;
	return {
		url,
		...(password ? { password } : {}),
		...(tls && serverName ? { tlsServerName: serverName } : {}),
		...(tls && !flag(`${Q}TLS_VALIDATE_CERTIFICATE`, true) ? { tlsRejectUnauthorized: false } : {}),
		family: flag(`${Q}DUALSTACK`, false) ? 0 : 4,
		...(keepAliveMs !== undefined ? { keepAliveMs } : {}),
	};
}

/** Settings that fail every call, naming the variable to fix. */
function unusable(variable: string, reason: string): RedisSettings {
	return { url: 'redis://localhost:6379/0', unusable: new RedisUnavailable(variable, `n8n's setting ${variable} ${reason}`) };
}
