/**
 * The Redis every n8n process of an install shares (queue mode already runs one), named in the
 * credential: it holds the credential's shared rate limit and the SMS send records. One ioredis
 * connection per process and per (URL, password, CA), reused by every node and execution, with a
 * deadline on connecting and on every command. There is no endless reconnect loop: a lost
 * connection ends, its commands fail at once, and the next call opens a new one.
 */
import { createHash } from 'crypto';
// eslint-disable-next-line @n8n/community-nodes/no-restricted-imports -- ioredis, n8n's own Redis client (scripts/n8n-accepted-findings.mjs)
import { Command, Redis } from 'ioredis';

import { registerProcessState } from '../../state/processState';
import { cancellation, cancelReason, connectionReason } from './reasons';
import { REDIS_PASSWORD_FIELD, REDIS_URL_FIELD, RedisUnavailable, parseRedisUrl, type ConnectionOptions, type RedisSettings, type RedisTarget } from './settings';

export * from './settings';

/** Deadlines; tests lower them to fail fast. A call may ask for a shorter one (its item's timeout). */
export const redisTimeouts = {
	/** Opening the TCP connection and the TLS handshake. */
	connectMs: 5_000,
	/** Any one command, the login, database select and ready check of a new connection included. */
	commandMs: 5_000,
};

/** A Lua script run by its SHA1 (EVALSHA), sent whole (EVAL) only when Redis does not have it yet. */
export class RedisScript {
	readonly sha: string;

	constructor(
		readonly source: string,
		readonly keyCount: number,
	) {
		this.sha = createHash('sha1').update(source).digest('hex');
	}
}

export interface RedisCallOptions {
	/** A shorter deadline for each command of this call, in ms (the item's Timeout). */
	timeoutMs?: number;
	signal?: AbortSignal;
}

/**
 * One shared connection. Commands wait for it only while it is being opened; connecting is
 * bounded by ioredis's connectTimeout (TCP and TLS) and commandTimeout (login, select, ready check).
 */
export class SharedRedis {
	private client?: Redis;
	private opening?: Promise<Redis>;
	private lastError?: Error;
	private opened = 0;
	readonly where: string;

	private readonly target: RedisTarget;
	/** Why the URL cannot be used, when it cannot. */
	private readonly invalid?: RedisUnavailable;

	constructor(
		target: RedisTarget | RedisUnavailable,
		private readonly options: ConnectionOptions = {},
	) {
		if (target instanceof RedisUnavailable) this.invalid = target;
		this.target = target instanceof RedisUnavailable ? { host: '', port: 0, tls: false, database: 0 } : target;
		// Settings it cannot use name no address.
		this.where = this.invalid ? '' : `${this.target.host}:${this.target.port}${this.target.database ? `/${this.target.database}` : ''}`;
	}

	/** Runs a script: EVALSHA, then EVAL once when Redis answers NOSCRIPT. */
	async runScript(script: RedisScript, keys: string[], args: Array<string | number>, options: RedisCallOptions = {}): Promise<unknown> {
		const argv = [script.keyCount, ...keys, ...args];
		return await this.run(async (send) =>
			send('evalsha', [script.sha, ...argv]).catch(async (error: unknown) => {
				if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return await send('eval', [script.source, ...argv]);
				return await Promise.reject(error);
			}),
		options);
	}

	/** One command, e.g. `command('SET', [key, value, 'NX', 'PX', ms])`; answers as ioredis does (strings, numbers, arrays, null). */
	async command(name: string, args: Array<string | number>, options: RedisCallOptions = {}): Promise<unknown> {
		return await this.run(async (send) => await send(name, args), options);
	}

	/**
	 * Sends commands on the connection, each with the call's deadline; every failure, the
	 * connection's included, is a RedisUnavailable naming the field to fix. A cancelled call
	 * rejects with the signal's reason instead.
	 */
	private async run<T>(work: (send: (name: string, args: Array<string | number>) => Promise<unknown>) => Promise<T>, options: RedisCallOptions): Promise<T> {
		const { signal } = options;
		if (signal?.aborted) throw cancelReason(signal);
		// A URL that cannot be used fails each call, before anything is sent, like an unreachable Redis.
		if (this.invalid) throw this.invalid;
		const limitMs = Math.max(1, Math.min(options.timeoutMs ?? redisTimeouts.commandMs, redisTimeouts.commandMs));
		const { cancelled, done } = cancellation(signal);
		let connected = false;
		try {
			const client = await Promise.race([this.open(), cancelled]);
			connected = true;
			const send = async (name: string, args: Array<string | number>) => {
				const command = new Command(name, args, { replyEncoding: 'utf8' });
				// Set before sending, so it wins over the connection's longer commandTimeout.
				command.setTimeout(limitMs);
				return await client.sendCommand(command);
			};
			return await Promise.race([work(send), cancelled]);
		} catch (error) {
			// A cancellation is no fault of Redis: it keeps its own reason.
			if (signal?.aborted) throw cancelReason(signal);
			throw this.explain(error, limitMs, connected);
		} finally {
			done();
		}
	}

	private explain(error: unknown, limitMs: number, connected: boolean): RedisUnavailable {
		if (error instanceof RedisUnavailable) return error;
		const message = error instanceof Error ? error.message : String(error);
		if (/Command timed out/i.test(message)) return new RedisUnavailable(REDIS_URL_FIELD, `no answer from Redis at ${this.where} within ${limitMs / 1000} s`);
		// A reply error: Redis answered but refused (a script error, OOM, a read-only replica).
		if (error instanceof Error && error.name === 'ReplyError') {
			const { field, reason } = connectionReason(error, this.where, this.target, redisTimeouts.connectMs);
			if (field === REDIS_PASSWORD_FIELD) return new RedisUnavailable(field, reason);
			// A replica after a failover: the next call opens a new connection, to the new primary (as n8n's QUEUE_BULL_REDIS_RECONNECT_ON_FAILOVER does).
			if (message.startsWith('READONLY')) this.close();
			return new RedisUnavailable(REDIS_URL_FIELD, `Redis at ${this.where} refused the command (${message.split('\n')[0].slice(0, 160)})`, message);
		}
		const cause = this.lastError ?? (error instanceof Error ? error : undefined);
		if (connected) {
			// The connection had answered as Redis: it was lost (a restart, a network fault, a stray reply).
			const detail = ((cause as { code?: string } | undefined)?.code ?? cause?.message ?? 'closed').slice(0, 120);
			return new RedisUnavailable(REDIS_URL_FIELD, `the connection to Redis at ${this.where} was lost (${detail}); the next call reconnects`);
		}
		const { field, reason } = connectionReason(cause, this.where, this.target, redisTimeouts.connectMs);
		return new RedisUnavailable(field, reason);
	}

	private async open(): Promise<Redis> {
		if (this.client?.status === 'ready') return this.client;
		this.opening ??= this.connect().finally(() => {
			this.opening = undefined;
		});
		return await this.opening;
	}

	/** How many connections this has opened: facts learnt on one (store/redis/environment.ts) may not hold on the next. */
	get connectionCount(): number {
		return this.opened;
	}

	private async connect(): Promise<Redis> {
		this.close();
		this.lastError = undefined;
		this.opened++;
		const { host, port, tls, username, password, database } = this.target;
		const { tlsCa, tlsServerName, tlsRejectUnauthorized, family, keepAliveMs } = this.options;
		const client = new Redis({
			host,
			port,
			username,
			password,
			db: database,
			lazyConnect: true,
			connectTimeout: redisTimeouts.connectMs,
			commandTimeout: redisTimeouts.commandMs,
			// No queue while disconnected and no reconnect loop: a command fails at once, the next call reconnects.
			enableOfflineQueue: false,
			maxRetriesPerRequest: 0,
			retryStrategy: () => null,
			autoResubscribe: false,
			disableClientInfo: true,
			...(family !== undefined ? { family } : {}),
			...(keepAliveMs !== undefined ? { keepAlive: keepAliveMs } : {}),
			tls: tls
				? {
						servername: tlsServerName ?? (/^[\d.]+$|:/.test(host) ? undefined : host),
						...(tlsCa ? { ca: tlsCa } : {}),
						...(tlsRejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
					}
				: undefined,
		});
		this.client = client;
		// Kept to explain a failed connect; without a listener ioredis would print errors to the console.
		client.on('error', (error: Error) => {
			this.lastError ??= error;
			// A reply nobody asked for: later replies could be matched to the wrong commands.
			if (error.message.startsWith('Command queue state error')) this.retire(client);
		});
		await client.connect();
		// Never the reason a process stays alive.
		client.stream?.unref?.();
		return client;
	}

	/** Closes the connection; a later call opens a new one. */
	close(): void {
		if (this.client) this.retire(this.client);
	}

	/** Stops using `client` at once (its status stays 'ready' until the socket has closed). */
	private retire(client: Redis) {
		if (this.client === client) this.client = undefined;
		// An ended client has nothing to close (ioredis would still arm a 2 s timer for it).
		if (client.status === 'end') return;
		client.disconnect();
		// At once: a TLS socket would otherwise wait up to 2 s for the server's half of the close.
		client.stream?.destroy();
	}
}

const connections = new Map<string, { redis: SharedRedis; owners: Set<string> }>();
const ownerKeys = new Map<string, string>();

/** Identifies the settings by a hash, as they hold the password. */
function connectionKey(settings: RedisSettings): string {
	const { url, password, unusable, tlsCa, ...options } = settings;
	const parts = [url.trim(), password ?? '', tlsCa?.trim() ?? '', unusable?.message ?? '', JSON.stringify(options, Object.keys(options).sort())];
	return createHash('sha256').update(parts.join('\n')).digest('hex');
}

/**
 * The process's connection for these settings. `owner` (a credential's hash) ties it to a
 * credential: when that credential's settings change, its old connection closes unless another
 * credential still uses it. A URL it cannot use fails each call (RedisUnavailable), not this.
 */
export function redisFor(settings: RedisSettings, owner: string): SharedRedis {
	const key = connectionKey(settings);
	let entry = connections.get(key);
	if (!entry) {
		let target: RedisTarget | RedisUnavailable;
		try {
			target = settings.unusable ?? parseRedisUrl(settings.url.trim());
			if (settings.password && !(target instanceof RedisUnavailable)) target.password = settings.password;
		} catch (error) {
			target = error as RedisUnavailable;
		}
		const { tlsCa, tlsServerName, tlsRejectUnauthorized, family, keepAliveMs } = settings;
		entry = { redis: new SharedRedis(target, { tlsCa: tlsCa?.trim() || undefined, tlsServerName, tlsRejectUnauthorized, family, keepAliveMs }), owners: new Set() };
		connections.set(key, entry);
	}
	const previous = ownerKeys.get(owner);
	if (previous !== key) {
		ownerKeys.set(owner, key);
		entry.owners.add(owner);
		if (previous !== undefined) releaseOwner(previous, owner);
	}
	return entry.redis;
}

/** The credential no longer uses Redis (its URL was cleared): its connection closes if nobody else uses it. */
export function releaseRedis(owner: string): void {
	const previous = ownerKeys.get(owner);
	if (previous === undefined) return;
	ownerKeys.delete(owner);
	releaseOwner(previous, owner);
}

function releaseOwner(key: string, owner: string) {
	const entry = connections.get(key);
	if (!entry) return;
	entry.owners.delete(owner);
	if (entry.owners.size === 0) {
		entry.redis.close();
		connections.delete(key);
	}
}

registerProcessState('redisConnections', () => {
	for (const { redis } of connections.values()) redis.close();
	connections.clear();
	ownerKeys.clear();
});

/** How many connections this process holds (tests read it through nodes/shared/testing.ts). */
export function openRedisCount(): number {
	return connections.size;
}
