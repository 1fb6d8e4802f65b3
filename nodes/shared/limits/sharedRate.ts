/**
 * One credential's request rate shared by every n8n process (queue-mode main, workers, webhook
 * processes) through the Redis the credential names (store/redis/connection.ts), usually the one queue mode already
 * runs. Each call books its start time in Redis with one atomic script, and a 429 pauses and
 * lowers the rate for all processes at once. Without it, N workers send N times the limit.
 */
import { accountKeyOf } from '../gateway/account';
import { REDIS_URL_FIELD, RedisScript, RedisUnavailable, redisFor, releaseRedis, type RedisSettings, type SharedRedis } from '../store/redis/connection';
import { abortableSleep } from './abortableSleep';
import { LEARNED_RATE_HALF_LIFE_MS, LEARNED_RATE_HOLD_MS } from './learnedRate';

/**
 * The gateway counts arrivals in its own one-second window. A call that leaves a little late
 * (event-loop lag on a busy worker, the network) would put rate + 1 arrivals in one window and
 * draw a 429 that pauses every process, so starts are spaced for a window this much longer.
 */
const ARRIVAL_MARGIN_MS = 25;

/**
 * State per credential in one hash: `next` start time, `paused` until (a Retry-After within the
 * cap), `held` until (one the cap cut short: a call waits for it only until its own deadline), the
 * learned `rate` and the time of the 429 that taught it (`throttled`; the rate holds for
 * LEARNED_RATE_HOLD_MS, then doubles every LEARNED_RATE_HALF_LIFE_MS, as in limiter.ts); `starts`
 * (a sorted set) holds the last second's start times. Times come from Redis's clock, so processes on different machines agree.
 * ARGV: operation (take | throttled | held), fixed rate (0 = none), then for take the ms the caller
 * may still wait (-1 = no bound), for throttled and held the pause in ms.
 * Returns the milliseconds the caller waits before starting (take; a start past its bound is not
 * booked) or 0.
 */
const SCRIPT = new RedisScript(
	`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fixed = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'next', 'paused', 'rate', 'throttled', 'held')
local nextStart = tonumber(state[1]) or 0
local paused = tonumber(state[2]) or 0
local learned = tonumber(state[3])
local throttled = tonumber(state[4]) or 0
local held = tonumber(state[5]) or 0
local rate = nil
if learned ~= nil then rate = learned * 2 ^ (math.max(0, now - throttled - ${LEARNED_RATE_HOLD_MS}) / ${LEARNED_RATE_HALF_LIFE_MS}) end
if fixed > 0 and (rate == nil or rate > fixed) then rate = fixed end
local function done(result)
  redis.call('PEXPIRE', KEYS[1], 3600000)
  redis.call('PEXPIRE', KEYS[2], 3600000)
  return result
end
if ARGV[1] == 'held' then
  redis.call('HSET', KEYS[1], 'held', math.max(held, now + tonumber(ARGV[3])))
  return done(0)
end
if ARGV[1] == 'throttled' then
  paused = math.max(paused, now + tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'paused', paused)
  if now - throttled < 1000 then return done(0) end
  local achieved = redis.call('ZCOUNT', KEYS[2], now - 1000, now)
  local base = math.max(achieved, 1)
  if rate ~= nil and rate < base then base = rate end
  redis.call('HSET', KEYS[1], 'rate', math.max(1, base * 0.95), 'throttled', now)
  return done(0)
end
local bound = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 1000)
if bound >= 0 and held > now + bound then held = now + bound end
local start = math.max(now, paused, held)
if rate ~= nil then start = math.max(start, nextStart) end
local wait = math.ceil(start - now)
if bound >= 0 and wait > bound then return done(wait) end
if rate ~= nil then redis.call('HSET', KEYS[1], 'next', start + (1000 + ${ARRIVAL_MARGIN_MS}) / rate) end
redis.call('ZADD', KEYS[2], start, start .. ':' .. redis.call('HINCRBY', KEYS[1], 'seq', 1))
return done(wait)
`,
	2,
);

/** The shared rate of one credential (identified by a hash, never the appCode) in one Redis. */
export class SharedRate {
	private readonly keys: string[];

	constructor(
		private readonly redis: SharedRedis,
		accountKey: string,
		/** The item's Timeout: no Redis command of a call waits longer. */
		private readonly timeoutMs?: number,
	) {
		this.keys = [`n8n-nodes-data-gateway:rate:${accountKey}`, `n8n-nodes-data-gateway:starts:${accountKey}`];
	}

	/**
	 * Books this call's start across all processes and waits for it. Resolves 0 once started, or,
	 * without waiting or booking, the wait in ms when the start would come after `deadline` (epoch ms).
	 * Throws RedisUnavailable (naming the field) when Redis cannot be used.
	 */
	async waitForStart(fixedPerSecond: number, signal?: AbortSignal, deadline?: number): Promise<number> {
		for (let turn = 1; ; turn++) {
			// A duration, not a time: this host's clock and Redis's need not agree.
			const bound = deadline === undefined ? -1 : Math.max(0, deadline - Date.now());
			const wait = await this.run('take', fixedPerSecond, bound, signal);
			// The script booked no start past the bound; the round trip's milliseconds fail nothing.
			if (bound >= 0 && wait > bound) return wait;
			const due = Date.now() + wait;
			if (wait > 0) await abortableSleep(wait, signal);
			// Woken late by a busy event loop: leaving now would crowd the gateway's window with the
			// calls booked after this one, so the call takes one new turn (a lost slot, not a 429).
			if (turn > 1 || Date.now() - due <= ARRIVAL_MARGIN_MS) return 0;
		}
	}

	/**
	 * The gateway said 429: every process pauses for `pauseMs` (Retry-After, at most the cap), and the
	 * shared rate drops; when the cap cut the pause short (`capped`), calls are only held, and no rate is learned.
	 */
	async onThrottled(fixedPerSecond: number, pauseMs: number, capped = false): Promise<void> {
		await this.run(capped ? 'held' : 'throttled', fixedPerSecond, Math.round(pauseMs));
	}

	private async run(operation: 'take' | 'throttled' | 'held', fixedPerSecond: number, milliseconds: number, signal?: AbortSignal): Promise<number> {
		const reply = await this.redis.runScript(SCRIPT, this.keys, [operation, fixedPerSecond, Math.round(milliseconds)], { timeoutMs: this.timeoutMs, signal });
		// The script answers an integer; anything else is not our script's answer.
		if (typeof reply !== 'number' || !Number.isFinite(reply)) {
			throw new RedisUnavailable(REDIS_URL_FIELD, `Redis at ${this.redis.where} answered the rate script with ${JSON.stringify(reply)?.slice(0, 60) ?? 'nothing'}, not a number`);
		}
		return reply;
	}
}

/**
 * The credential's shared rate: one connection per Redis in this process (store/redis/connection.ts), keys per
 * credential. Without Redis settings, undefined, and the credential's earlier connection is let go.
 */
export function sharedRateFor(redis: RedisSettings | undefined, baseUrl: string, appCode: string, timeoutMs?: number): SharedRate | undefined {
	const accountKey = accountKeyOf(baseUrl, appCode);
	const owner = `rate:${accountKey}`;
	if (!redis) {
		releaseRedis(owner);
		return undefined;
	}
	return new SharedRate(redisFor(redis, owner), accountKey, timeoutMs);
}
