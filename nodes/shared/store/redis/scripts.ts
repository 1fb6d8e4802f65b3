/**
 * The Lua scripts of the Redis store (redisStore.ts): its compare-and-set, the turn it takes when
 * its updates keep losing, and erasing one phone number's keys.
 */
import { NAME_PREFIX } from '../keyName';
import { RedisScript } from './connection';

/** The set of the names written about one phone number, by its tag (keyName.ts phoneTag). */
export const PHONE_SET_PREFIX = `${NAME_PREFIX}phone.`;

/**
 * The turn: an update that met a conflict TURN_AFTER times in a row takes it, and until it has
 * written (or TURN_MS passed, should its process die) every other update waits. Without it a
 * process whose updates keep losing to another's on a busy key (two workers sending to one
 * account's budget) would give up. Rarely held, so one turn for the whole store is enough.
 */
export const TURN_NAME = `${NAME_PREFIX}turn`;
const TURN_MS = 2_000;
export const TURN_AFTER = 2;

/**
 * Writes only if every key still holds what the update read. KEYS: each key's name, then each
 * key's name of earlier versions (legacyKeyName: read when the name is absent, deleted by a
 * write), then the key check (keyName.ts KEY_CHECK_NAME), then the turn (TURN_NAME). ARGV: this
 * process's key check, this update's token, '1' to take the turn when free, per key what it held
 * ('0' absent, '1' followed by the value), then per write the key's index, 'D' (delete), 'K' (keep
 * until deleted) or a lifetime in ms, the value, and the phone tag ('' for none: else the name
 * joins that tag's set, which lives as long as its longest entry). The keys are written first: a
 * Redis out of memory refuses the first SET, before anything changed. Answers 1 when written (and
 * gives back the turn if it was this update's), 0 on a conflict, 2 while another update holds the
 * turn, -1 when the store's key check is another process's.
 */
const COMPARE_AND_SET_SOURCE = `local n = (#KEYS - 2) / 2
local check = redis.call('GET', KEYS[#KEYS - 1])
if check and check ~= ARGV[1] then return -1 end
local turn = redis.call('GET', KEYS[#KEYS])
if turn and turn ~= ARGV[2] then return 2 end
if (not turn) and ARGV[3] == '1' then
  redis.call('SET', KEYS[#KEYS], ARGV[2], 'PX', ${TURN_MS})
  turn = ARGV[2]
end
for i = 1, n do
  local held = redis.call('GET', KEYS[i])
  if not held then held = redis.call('GET', KEYS[n + i]) end
  local expected = ARGV[i + 3]
  if expected == '0' then
    if held then return 0 end
  elseif (not held) or ('1' .. held) ~= expected then
    return 0
  end
end
if not check then redis.call('SET', KEYS[#KEYS - 1], ARGV[1]) end
for i = n + 4, #ARGV, 4 do
  local key = KEYS[tonumber(ARGV[i])]
  local mode = ARGV[i + 1]
  if mode == 'D' then redis.call('DEL', key)
  elseif mode == 'K' then redis.call('SET', key, ARGV[i + 2])
  else redis.call('SET', key, ARGV[i + 2], 'PX', mode) end
end
for i = n + 4, #ARGV, 4 do
  local index = tonumber(ARGV[i])
  local mode = ARGV[i + 1]
  redis.call('DEL', KEYS[n + index])
  if ARGV[i + 3] ~= '' and mode ~= 'D' then
    local tagged = '${PHONE_SET_PREFIX}' .. ARGV[i + 3]
    local existed = redis.call('EXISTS', tagged) == 1
    redis.call('SADD', tagged, KEYS[index])
    if mode == 'K' then redis.call('PERSIST', tagged)
    elseif not existed then redis.call('PEXPIRE', tagged, mode)
    else
      local left = redis.call('PTTL', tagged)
      if left >= 0 and left < tonumber(mode) then redis.call('PEXPIRE', tagged, mode) end
    end
  end
end
if turn then redis.call('DEL', KEYS[#KEYS]) end
return 1`;

/**
 * Deletes the keys in a phone tag's set, and the set (KEYS[1]); answers how many keys it deleted,
 * or -1 when the store's key check (KEYS[2]) is another key's (ARGV[1] is this process's): its
 * tags are another key's too, so an erase here would find nothing and say 0.
 */
export const ERASE_PHONE = new RedisScript(
	`local check = redis.call('GET', KEYS[2])
if check and check ~= ARGV[1] then return -1 end
local removed = 0
for _, name in ipairs(redis.call('SMEMBERS', KEYS[1])) do removed = removed + redis.call('DEL', name) end
redis.call('DEL', KEYS[1])
return removed`,
	2,
);

/** Deletes the turn (KEYS[1]) if it is still this update's (ARGV[1]). */
export const GIVE_BACK_TURN = new RedisScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`, 1);

/** The script for `count` keys (a script's key count is part of how it is called). */
const compareAndSetScripts = new Map<number, RedisScript>();
export function compareAndSet(count: number): RedisScript {
	let script = compareAndSetScripts.get(count);
	if (!script) compareAndSetScripts.set(count, (script = new RedisScript(COMPARE_AND_SET_SOURCE, count)));
	return script;
}
