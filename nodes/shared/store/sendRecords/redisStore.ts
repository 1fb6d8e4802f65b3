import { createHash } from 'crypto';

import { RedisScript, type SharedRedis } from '../redis/connection';
import { countWindows, limitProblem, type CountWindow, type GuardedSend, type SendRecordStore, type SmsLimits, type StoreDecision } from './rules';

/**
 * One send's decision, atomic in Redis: a repeat when another execution recorded the message
 * within the window; refused when a count is at its limit; else every count goes up by one and
 * the message is recorded for the window. Nothing changes unless the answer is "send".
 * KEYS: the message's key, then a count key per window (minute, hour, day); unused ones are
 * never touched. ARGV: execution, window ms (0 = off), number of counts (0 or 3), then per
 * count: limit, ms to keep it.
 * Returns {1, created} (send; created = 1 when this call recorded the message), {0} (repeat),
 * or {2, window} (the count of window 1, 2 or 3 is at its limit).
 */
const RESERVE = new RedisScript(
	`
local windowMs = tonumber(ARGV[2])
local counts = tonumber(ARGV[3])
local first = 2
if windowMs > 0 then
  local holder = redis.call('GET', KEYS[1])
  if holder and holder ~= ARGV[1] then return {0} end
end
for i = 0, counts - 1 do
  if tonumber(redis.call('GET', KEYS[first + i]) or '0') >= tonumber(ARGV[4 + 2 * i]) then return {2, i + 1} end
end
for i = 0, counts - 1 do
  redis.call('INCR', KEYS[first + i])
  redis.call('PEXPIRE', KEYS[first + i], ARGV[5 + 2 * i])
end
local created = 0
if windowMs > 0 then
  if redis.call('SET', KEYS[1], ARGV[1], 'PX', windowMs, 'NX') then created = 1 else redis.call('PEXPIRE', KEYS[1], windowMs) end
end
return {1, created}
`,
	4,
);

/**
 * Gives back one thing a certainly-failed send took. KEYS: a message key (deleted while this
 * execution holds it) or a count key (lowered by one, never below 0). ARGV: execution, 'm' or 'c'.
 */
const RELEASE = new RedisScript(
	`
if ARGV[2] == 'm' then
  if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
elseif tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
end
return 1
`,
	1,
);

/** A count key outlives its window by this much, so processes whose clocks differ a little agree. */
const COUNT_GRACE_MS = 60_000;
/** Scripts sent together before the answers are awaited. */
const SENDS_PER_ROUND_TRIP = 100;
const KEY_PREFIX = 'n8n-nodes-data-gateway:sms';

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/**
 * The send records in Redis: one key per message (SET NX PX, kept for the repeat window) and one
 * counter per number and calendar window (INCR with PEXPIRE until the window ends), each with its
 * own expiry; one short script per send, O(1) however many records are kept. Keys carry hashes of
 * the node and the number, never the appCode or the number itself.
 */
export class RedisRecordStore implements SendRecordStore {
	readonly acrossRestarts = true;
	readonly acrossProcesses = true;
	private readonly prefix: string;

	constructor(
		private readonly redis: SharedRedis,
		/** Names the node (workflow and node ID) and the account (its hash). */
		scope: string,
		private readonly executionId: string,
		private readonly limits: SmsLimits | undefined,
		private readonly repeatWindowMinutes: number,
		/** A deadline per command; no cancel signal: a reservation is short, and one listener per send would pile up on it. */
		private readonly options: { timeoutMs?: number } = {},
	) {
		// The braces keep a node's keys in one slot of a Redis Cluster, as one script touches several.
		this.prefix = `${KEY_PREFIX}:{${hash(scope)}}`;
	}

	get where(): string {
		return `Redis at ${this.redis.where}`;
	}

	async reserve(sends: GuardedSend[], now: number): Promise<Map<number, StoreDecision>> {
		const windowMs = Math.max(0, Math.round(this.repeatWindowMinutes * 60_000));
		// One script per send, a chunk at a time on the one connection: Redis runs them in item order,
		// and the event loop is free between chunks.
		const answers: Array<{ send: GuardedSend; windows: CountWindow[]; messageKey: string; countKeys: string[]; reply: number[] }> = [];
		for (let start = 0; start < sends.length; start += SENDS_PER_ROUND_TRIP) {
			const chunk = sends.slice(start, start + SENDS_PER_ROUND_TRIP).map(async (send) => {
				const windows = countWindows(this.limits, send.phone, now);
				const messageKey = `${this.prefix}:m:${send.message}`;
				const phoneKey = send.phone === undefined ? '' : hash(send.phone);
				const countKeys = windows.map((window) => `${this.prefix}:c:${phoneKey}:${window.name}:${window.number}`);
				const keys = [messageKey, ...countKeys, ...Array.from({ length: 3 - countKeys.length }, () => `${this.prefix}:unused`)];
				const args = [this.executionId, windowMs, windows.length, ...windows.flatMap((window) => [window.allowed, Math.max(1, window.endsAt - now + COUNT_GRACE_MS)])];
				const reply = (await this.redis.runScript(RESERVE, keys, args, this.options)) as number[];
				return { send, windows, messageKey, countKeys, reply };
			});
			answers.push(...(await Promise.all(chunk)));
		}
		const decisions = new Map<number, StoreDecision>();
		const createdHere = new Set<string>();
		for (const { send, windows, messageKey, countKeys, reply } of answers) {
			const [kind, detail] = reply.map(Number);
			if (kind === 0) decisions.set(send.itemIndex, { decision: { kind: 'repeat' }, holds: [] });
			else if (kind === 2) decisions.set(send.itemIndex, { decision: { kind: 'limit', problem: limitProblem(send.phone, windows[detail - 1]) }, holds: [] });
			else {
				// A count is one item's own; a message key this run recorded is held by every item that sends it (the same message twice).
				const holds = countKeys.map((key) => `c ${send.itemIndex} ${key}`);
				if (detail === 1) createdHere.add(messageKey);
				if (createdHere.has(messageKey)) holds.push(`m ${messageKey}`);
				decisions.set(send.itemIndex, { decision: { kind: 'send' }, holds });
			}
		}
		return decisions;
	}

	async release(holds: string[]): Promise<void> {
		await Promise.all(
			holds.map(async (hold) => {
				const kind = hold.slice(0, 1);
				const key = kind === 'm' ? hold.slice(2) : hold.slice(hold.indexOf(' ', 2) + 1);
				await this.redis.runScript(RELEASE, [key], [this.executionId, kind], this.options);
			}),
		);
	}
}
