/**
 * One credential's request rate shared by every n8n process (queue-mode main, workers, webhook
 * processes) through a Redis the user names in the credential, usually the one queue mode already
 * runs. Each call books its start time in Redis with one atomic script, and a 429 pauses and
 * lowers the rate for all processes at once. Without it, N workers send N times the limit.
 *
 * The client is a few lines of RESP over node:net instead of a Redis package: this needs one
 * command (EVAL), and a package would add a runtime dependency with its own tree to every install,
 * beside the Redis client n8n already ships in its own version.
 */
import { createHash } from 'crypto';
// eslint-disable-next-line @n8n/community-nodes/no-restricted-imports -- a four-command Redis client instead of a runtime dependency (see above)
import { createConnection, type Socket } from 'net';

import { abortableSleep } from './sleep';

/** The shared limit cannot be used: a bad URL, or Redis unreachable or refusing. Names the field to fix. */
export class SharedLimitUnavailable extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'SharedLimitUnavailable';
	}
}

/** Redis answers: RESP2 simple strings, errors, integers, bulk strings and arrays. */
type Reply = string | number | null | Error | Reply[];

/** Parses one reply from `buffer` at `offset`; undefined when more bytes are needed. */
function parseReply(buffer: Buffer, offset: number): { reply: Reply; next: number } | undefined {
	const lineEnd = buffer.indexOf('\r\n', offset);
	if (lineEnd < 0) return undefined;
	const type = String.fromCharCode(buffer[offset]);
	const line = buffer.toString('utf8', offset + 1, lineEnd);
	const next = lineEnd + 2;
	switch (type) {
		case '+':
			return { reply: line, next };
		case '-':
			return { reply: new SharedLimitUnavailable(line), next };
		case ':':
			return { reply: Number(line), next };
		case '$': {
			const length = Number(line);
			if (length < 0) return { reply: null, next };
			if (buffer.length < next + length + 2) return undefined;
			return { reply: buffer.toString('utf8', next, next + length), next: next + length + 2 };
		}
		case '*': {
			const count = Number(line);
			if (count < 0) return { reply: null, next };
			const items: Reply[] = [];
			let position = next;
			for (let index = 0; index < count; index++) {
				const item = parseReply(buffer, position);
				if (!item) return undefined;
				items.push(item.reply);
				position = item.next;
			}
			return { reply: items, next: position };
		}
		default:
			throw new SharedLimitUnavailable(`unexpected Redis reply type ${JSON.stringify(type)}`);
	}
}

function encodeCommand(args: Array<string | number>): string {
	return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(String(arg))}\r\n${arg}\r\n`).join('')}`;
}

interface RedisTarget {
	host: string;
	port: number;
	username?: string;
	password?: string;
	database: number;
}

/** `redis://[user:password@]host[:port][/db]`; anything else is a clear error naming the field. */
export function parseRedisUrl(text: string): RedisTarget {
	if (!URL.canParse(text)) throw new SharedLimitUnavailable('Shared Limit Redis URL is not a URL; use redis://host:6379 (or clear the field)');
	const url = new URL(text);
	if (url.protocol !== 'redis:') throw new SharedLimitUnavailable(`Shared Limit Redis URL must start with redis:// (TLS is not supported); clear the field to limit each process on its own`);
	const database = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
	if (!Number.isInteger(database) || database < 0) throw new SharedLimitUnavailable('Shared Limit Redis URL: the path must be a database number such as /0');
	return {
		host: url.hostname.replace(/^\[|\]$/g, ''),
		port: url.port ? Number(url.port) : 6379,
		username: url.username ? decodeURIComponent(url.username) : undefined,
		password: url.password ? decodeURIComponent(url.password) : undefined,
		database,
	};
}

/** One connection, commands answered in order; reconnects on the next command after a loss. */
class RedisConnection {
	private socket?: Socket;
	private ready?: Promise<void>;
	private pending: Array<{ resolve: (reply: Reply) => void; reject: (error: Error) => void }> = [];
	private buffer: Buffer = Buffer.alloc(0);

	constructor(private readonly target: RedisTarget) {}

	async command(args: Array<string | number>): Promise<Reply> {
		await this.connect();
		return await this.send(args);
	}

	private send(args: Array<string | number>): Promise<Reply> {
		return new Promise((resolve, reject) => {
			this.pending.push({ resolve, reject });
			this.socket!.write(encodeCommand(args));
		});
	}

	private connect(): Promise<void> {
		if (this.ready && this.socket && !this.socket.destroyed) return this.ready;
		const { host, port, username, password, database } = this.target;
		const where = `${host}:${port}`;
		this.ready = new Promise<void>((resolve, reject) => {
			const socket = createConnection({ host, port });
			this.socket = socket;
			this.buffer = Buffer.alloc(0);
			socket.setNoDelay(true);
			// Never the reason a process stays alive.
			socket.unref();
			// Idle is fine; a command or a connection without an answer for 10 s fails instead of hanging the run.
			let connected = false;
			socket.setTimeout(10_000, () => {
				if (!connected || this.pending.length > 0) socket.destroy(new SharedLimitUnavailable(`no answer from Redis at ${where} in 10 s`));
			});
			socket.on('data', (chunk) => this.onData(chunk));
			socket.on('error', (error) => {
				const failure = new SharedLimitUnavailable(`Shared Limit Redis URL: cannot use Redis at ${where} (${error.message}); fix the URL or clear the field`);
				reject(failure);
				this.failAll(failure);
			});
			socket.once('close', () => this.failAll(new SharedLimitUnavailable(`Shared Limit Redis URL: the connection to ${where} closed`)));
			socket.once('connect', () => {
				connected = true;
				const setup: Array<Promise<Reply>> = [];
				if (password) setup.push(this.send(username ? ['AUTH', username, password] : ['AUTH', password]));
				if (database) setup.push(this.send(['SELECT', database]));
				Promise.all(setup).then((replies) => {
					const refused = replies.find((reply) => reply instanceof Error);
					if (refused) {
						socket.destroy();
						reject(new SharedLimitUnavailable(`Shared Limit Redis Password or URL: Redis at ${where} refused the login or database (${(refused as Error).message})`));
					} else resolve();
				}, reject);
			});
		});
		return this.ready;
	}

	private onData(chunk: Buffer) {
		this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
		let offset = 0;
		for (;;) {
			const parsed = parseReply(this.buffer, offset);
			if (!parsed) break;
			offset = parsed.next;
			this.pending.shift()?.resolve(parsed.reply);
		}
		this.buffer = this.buffer.subarray(offset);
	}

	private failAll(error: Error) {
		const waiting = this.pending;
		this.pending = [];
		waiting.forEach(({ reject }) => reject(error));
	}
}

/**
 * The gateway counts arrivals in its own one-second window. A call that leaves a little late
 * (event-loop lag on a busy worker, the network) would put rate + 1 arrivals in one window and
 * draw a 429 that pauses every process, so starts are spaced for a window this much longer.
 */
const ARRIVAL_MARGIN_MS = 25;

/**
 * State per credential in one hash: `next` start time, `paused` until, learned `rate`, and the
 * times of the last 429 and probe; `starts` (a sorted set) holds the last second's start times.
 * Times come from Redis's clock, so processes on different machines agree.
 * ARGV: operation (take | throttled), fixed rate (0 = none), Retry-After in ms.
 * Returns the milliseconds the caller waits before starting (take) or 0.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fixed = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'next', 'paused', 'rate', 'throttled', 'probed')
local nextStart = tonumber(state[1]) or 0
local paused = tonumber(state[2]) or 0
local learned = tonumber(state[3])
local throttled = tonumber(state[4]) or 0
local probed = tonumber(state[5]) or 0
local rate = learned
if fixed > 0 and (rate == nil or rate > fixed) then rate = fixed end
local function done(result)
  redis.call('PEXPIRE', KEYS[1], 3600000)
  redis.call('PEXPIRE', KEYS[2], 3600000)
  return result
end
if ARGV[1] == 'throttled' then
  paused = math.max(paused, now + tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'paused', paused)
  if now - throttled < 1000 then return done(0) end
  local achieved = redis.call('ZCOUNT', KEYS[2], now - 1000, now)
  local base = math.max(achieved, 1)
  if rate ~= nil and rate < base then base = rate end
  redis.call('HSET', KEYS[1], 'rate', math.max(1, base * 0.95), 'throttled', now, 'probed', now)
  return done(0)
end
if learned ~= nil and now - probed >= 5000 then
  learned = learned * 1.05
  if fixed > 0 and learned > fixed then learned = fixed end
  redis.call('HSET', KEYS[1], 'rate', learned, 'probed', now)
  rate = learned
  if fixed > 0 and rate > fixed then rate = fixed end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 1000)
local start = math.max(now, paused)
if rate ~= nil then
  start = math.max(start, nextStart)
  redis.call('HSET', KEYS[1], 'next', start + (1000 + ${ARRIVAL_MARGIN_MS}) / rate)
end
redis.call('ZADD', KEYS[2], start, start .. ':' .. redis.call('HINCRBY', KEYS[1], 'seq', 1))
return done(start - now)
`;

const connections = new Map<string, RedisConnection>();

/** The shared rate of one credential (identified by a hash, never the appCode) in one Redis. */
export class SharedRate {
	private readonly keys: [string, string];

	constructor(
		private readonly connection: RedisConnection,
		accountKey: string,
	) {
		this.keys = [`n8n-nodes-data-gateway:rate:${accountKey}`, `n8n-nodes-data-gateway:starts:${accountKey}`];
	}

	/**
	 * Books this call's start across all processes and waits for it. Resolves 0 once started, or,
	 * without waiting, the booked wait in ms when the start would come after `deadline` (epoch ms).
	 */
	async waitForStart(fixedPerSecond: number, signal?: AbortSignal, deadline?: number): Promise<number> {
		for (let turn = 1; ; turn++) {
			const wait = await this.run('take', fixedPerSecond, 0);
			const due = Date.now() + wait;
			if (deadline !== undefined && due > deadline) return wait;
			if (wait > 0) await abortableSleep(wait, signal);
			// Woken late by a busy event loop: leaving now would crowd the gateway's window with the
			// calls booked after this one, so the call takes one new turn (a lost slot, not a 429).
			if (turn > 1 || Date.now() - due <= ARRIVAL_MARGIN_MS) return 0;
		}
	}

	/** The gateway said 429: every process pauses (for Retry-After, capped by the caller), and the shared rate drops. */
	async onThrottled(fixedPerSecond: number, retryAfterMs: number): Promise<void> {
		await this.run('throttled', fixedPerSecond, Math.round(retryAfterMs));
	}

	private async run(operation: 'take' | 'throttled', fixedPerSecond: number, retryAfterMs: number): Promise<number> {
		const reply = await this.connection.command(['EVAL', SCRIPT, 2, ...this.keys, operation, fixedPerSecond, retryAfterMs]);
		if (reply instanceof Error) throw new SharedLimitUnavailable(`Shared Limit Redis URL: Redis refused the rate script (${reply.message})`);
		return Number(reply);
	}
}

/** One connection per Redis (URL and password) in this process; the key is a hash, as it holds the password. */
export function sharedRateFor(redis: { url: string; password?: string }, baseUrl: string, appCode: string): SharedRate {
	const connectionKey = createHash('sha256').update(`${redis.url}\n${redis.password ?? ''}`).digest('hex');
	let connection = connections.get(connectionKey);
	if (!connection) {
		const target = parseRedisUrl(redis.url);
		connection = new RedisConnection(redis.password ? { ...target, password: redis.password } : target);
		connections.set(connectionKey, connection);
	}
	const accountKey = createHash('sha256').update(`${baseUrl}\n${appCode}`).digest('hex').slice(0, 32);
	return new SharedRate(connection, accountKey);
}
