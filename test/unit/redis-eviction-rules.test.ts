/**
 * What the store makes of what a Redis says about its keys (store/redis/environment.ts and
 * evictionRules.ts), on staged replies: the policy and persistence read from CONFIG or INFO, which
 * keys may live on a Redis that may evict, and the words of the refusal and of the hints. The same
 * rules against a real redis-server: test/store/redisEviction.test.ts.
 */
import { evictionOf, persistenceOf, probeRedis, type RedisEnvironment } from '../../nodes/shared/store/redis/environment';
import { environmentNotices, evictionRefusal, mayAllVanish } from '../../nodes/shared/store/redis/evictionRules';
import { RedisUnavailable } from '../../nodes/shared/store/redis/settings';

type Replies = Record<string, unknown>;

/** A connection that answers each command (`CONFIG GET <name>`, `INFO <section>`) from `replies`; an Error there is thrown. */
function staged(replies: Replies) {
	const asked: string[] = [];
	const send = async (name: string, args: string[]) => {
		const command = [name, ...args].join(' ');
		asked.push(command);
		const reply = replies[command];
		if (reply instanceof Error) throw reply;
		return reply;
	};
	return { send, asked };
}

const refusedBy = (what: string) => new RedisUnavailable('the field', 'refused', `ERR unknown command '${what}'\nsecond line`);

describe('what a Redis says about its keys', () => {
	it('reads the policy and persistence from CONFIG GET and INFO persistence, in one round of questions', async () => {
		const { send, asked } = staged({
			'CONFIG GET maxmemory-policy': ['maxmemory-policy', 'allkeys-lru'],
			'CONFIG GET save': ['save', '3600 1 300 100'],
			'INFO persistence': '# Persistence\r\nloading:0\r\naof_enabled:1\r\n',
		});
		expect(await probeRedis(send)).toEqual({ policy: 'allkeys-lru', refused: [], aof: true, rdb: true });
		expect(asked).toEqual(['CONFIG GET maxmemory-policy', 'CONFIG GET save', 'INFO persistence']);
	});

	it('falls back to INFO memory for the policy when CONFIG is refused, and names what was refused', async () => {
		const { send, asked } = staged({
			'CONFIG GET maxmemory-policy': refusedBy('CONFIG'),
			'CONFIG GET save': refusedBy('CONFIG'),
			'INFO persistence': 'aof_enabled:0\r\n# a comment:line\r\n:no name\r\n',
			'INFO memory': '# Memory\r\nmaxmemory_policy:volatile-ttl\r\n',
		});
		expect(await probeRedis(send)).toEqual({
			policy: 'volatile-ttl',
			refused: ["CONFIG GET maxmemory-policy: ERR unknown command 'CONFIG'", "CONFIG GET save: ERR unknown command 'CONFIG'"],
			aof: false,
		});
		expect(asked).toContain('INFO memory');
	});

	it('says nothing it was not told: no policy, no persistence when every question is refused or answered oddly', async () => {
		const { send } = staged({
			'CONFIG GET maxmemory-policy': ['another-name', 'noeviction'],
			'CONFIG GET save': ['save'],
			'INFO persistence': 'aof_enabled:maybe\r\n',
			'INFO memory': refusedBy('INFO'),
		});
		expect(await probeRedis(send)).toEqual({ refused: ["INFO memory: ERR unknown command 'INFO'"] });
	});

	it('keeps a short first line of a long refusal', async () => {
		const { send } = staged({
			'CONFIG GET maxmemory-policy': new RedisUnavailable('f', 'refused', `NOPERM ${'x'.repeat(200)}`),
			'CONFIG GET save': ['save', ''],
			'INFO persistence': '',
			'INFO memory': '',
		});
		const environment = await probeRedis(send);
		expect(environment.refused).toEqual([`CONFIG GET maxmemory-policy: NOPERM ${'x'.repeat(73)}`]);
		expect(environment.rdb).toBe(false);
	});

	it('fails when the connection fails, rather than reading that as "refused"', async () => {
		const lost = new RedisUnavailable('f', 'the connection was lost');
		const { send } = staged({ 'CONFIG GET maxmemory-policy': lost, 'CONFIG GET save': ['save', ''], 'INFO persistence': '' });
		await expect(probeRedis(send)).rejects.toBe(lost);
		const { send: other } = staged({ 'CONFIG GET maxmemory-policy': new Error('not Redis'), 'CONFIG GET save': ['save', ''], 'INFO persistence': '' });
		await expect(probeRedis(other)).rejects.toThrow('not Redis');
	});

	it('reads every policy but noeviction as one that may evict, and persistence as AOF, RDB, none or unknown', () => {
		expect(evictionOf({ refused: [] })).toBe('unknown');
		expect(evictionOf({ policy: 'noeviction', refused: [] })).toBe('never');
		for (const policy of ['allkeys-lru', 'volatile-lfu', 'a-policy-of-later-versions']) expect(evictionOf({ policy, refused: [] })).toBe('may');
		expect(persistenceOf({ refused: [], aof: true, rdb: false })).toBe('aof');
		expect(persistenceOf({ refused: [], aof: false, rdb: true })).toBe('rdb');
		expect(persistenceOf({ refused: [], aof: false, rdb: false })).toBe('none');
		expect(persistenceOf({ refused: [], aof: false })).toBe('unknown');
		expect(persistenceOf({ refused: [], rdb: false })).toBe('unknown');
	});
});

describe('which keys a Redis that may evict may hold', () => {
	it('lets answers, seen values, quota counts, delivery records and the catalogue vanish, nothing else', () => {
		for (const key of ['lookup-answer|a', 'seen|b', 'seen-generation|c', 'telephone-calls|d', 'catalogue|e', 'catalogue-accounts|f', 'delivery:g']) {
			expect(mayAllVanish([key])).toBe(true);
		}
		for (const key of ['sms|a', 'spend|b', 'usage|c', 'opt-out|d', 'opt-out-size|e', 'x lookup-answer|f', 'delivery|g', 'seen']) expect(mayAllVanish([key])).toBe(false);
		expect(mayAllVanish(['seen|a', 'sms|b'])).toBe(false);
		expect(mayAllVanish(['seen|a', 'delivery:b'])).toBe(true);
		expect(mayAllVanish([])).toBe(true);
	});
});

describe('the refusal and the hints', () => {
	const never = () => false;
	const always = () => true;
	const env = (environment: Partial<RedisEnvironment>): RedisEnvironment => ({ refused: [], ...environment });

	it('refuses a Redis that may evict, naming its policy and both fixes; accepts noeviction', () => {
		expect(evictionRefusal('the Redis', env({ policy: 'noeviction' }), never, 'THE_VARIABLE')).toBeUndefined();
		expect(evictionRefusal('the Redis', env({ policy: 'allkeys-lru' }), always, 'THE_VARIABLE')).toBe(
			'the Redis may evict keys (maxmemory-policy allkeys-lru): the SMS send records and per-number counts could vanish there before their time, and a message already sent could then be sent again. ' +
				`Set maxmemory-policy to noeviction on that Redis, or give the package a Redis of its own in the credential's "Shared Redis URL for Limits and Send Records" (a Redis you run keeps the default, noeviction)`,
		);
	});

	it('refuses a Redis that would not say, unless the operator confirms it does not evict', () => {
		const silent = env({ refused: ['CONFIG GET maxmemory-policy: NOPERM', 'INFO memory: NOPERM'] });
		expect(evictionRefusal('the Redis', silent, always, 'THE_VARIABLE')).toBeUndefined();
		expect(evictionRefusal('the Redis', silent, never, 'THE_VARIABLE')).toBe(
			'the Redis would not say whether it evicts keys (CONFIG GET maxmemory-policy: NOPERM; INFO memory: NOPERM): the SMS send records and per-number counts could vanish there before their time, and a message already sent could then be sent again if it does. ' +
				`Set maxmemory-policy to noeviction on that Redis and then THE_VARIABLE=true in n8n's environment, or give the package a Redis of its own in the credential's "Shared Redis URL for Limits and Send Records" (a Redis you run keeps the default, noeviction)`,
		);
	});

	it('hints what may vanish, and what a restart forgets when nothing is kept on disk', () => {
		expect(environmentNotices('R', env({ policy: 'noeviction', aof: true }), never)).toEqual([]);
		expect(environmentNotices('R', env({ policy: 'noeviction' }), never)).toEqual([]);
		expect(environmentNotices('R', env({ policy: 'volatile-lru', rdb: true }), always)).toEqual([
			'R may evict keys (maxmemory-policy volatile-lru): answers kept for reuse, what Only New has seen and the telephone quota counts may vanish before their time (a vanished answer is asked, and paid, again).',
		]);
		expect(environmentNotices('R', env({ aof: true }), never)).toEqual([
			'R would not say whether it evicts keys: answers kept for reuse, what Only New has seen and the telephone quota counts may vanish before their time (a vanished answer is asked, and paid, again) if it does.',
		]);
		expect(environmentNotices('R', env({ aof: true }), always)).toEqual([]);
		expect(environmentNotices('R', env({ policy: 'noeviction', aof: false, rdb: false }), never)).toEqual([
			'R keeps nothing on disk (no AOF, no RDB snapshots): a restart of that Redis forgets every record kept there. A message sent within its repeat window could then be sent again, per-number counts start again at 0, and kept answers are asked again.',
		]);
	});
});
