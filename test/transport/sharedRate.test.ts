/**
 * The credential's shared rate against a real Redis (Debian's redis-server, installed by the
 * helper when missing): two limiters standing for two n8n processes book from one budget.
 */
import { execFileSync } from 'node:child_process';

import { accountKeyOf } from '../../nodes/shared/gateway/account';
import { GatewayLimiter } from '../../nodes/shared/limits/limiter';
import { sharedRateFor } from '../../nodes/shared/limits/sharedRate';
import { closeAllRedis } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';

jest.setTimeout(180_000);

let redis: RunningRedis;
beforeAll(async () => {
	redis = await startRedis(() => undefined);
});
afterAll(async () => {
	closeAllRedis();
	await redis?.stop();
});

function limiterSharing(url: string, appCode: string, maxPerSecond: number) {
	const limiter = new GatewayLimiter({ maxConcurrent: 50, maxPerSecond });
	limiter.shared = sharedRateFor({ url }, 'http://gateway.test', appCode);
	return limiter;
}

async function startTimes(limiter: GatewayLimiter, calls: number): Promise<number[]> {
	return await Promise.all(
		Array.from({ length: calls }, async () => {
			const release = await limiter.acquire();
			release();
			return Date.now();
		}),
	);
}

describe('shared limit through Redis', () => {
	it('two processes together start no more than the credential allows per second', async () => {
		const first = limiterSharing(redis.url, 'code-a', 20);
		const second = limiterSharing(redis.url, 'code-a', 20);
		// The starts as Redis booked them, by Redis's clock: what this host observes adds its own event-loop lag.
		const startsKey = `n8n-nodes-data-gateway:starts:${accountKeyOf('http://gateway.test', 'code-a')}`;
		const booked = new Map<string, number>();
		const noteBooked = () => {
			const listed = execFileSync('redis-cli', ['-p', String(redis.port), 'ZRANGE', startsKey, '0', '-1', 'WITHSCORES'], { encoding: 'utf8' }).trim().split('\n');
			for (let index = 0; index + 1 < listed.length; index += 2) booked.set(listed[index], Number(listed[index + 1]));
		};
		const began = Date.now();
		const startAndNote = async (limiter: GatewayLimiter) => {
			const times = await startTimes(limiter, 1);
			noteBooked();
			return times[0];
		};
		const times = (await Promise.all(Array.from({ length: 20 }, async () => await Promise.all([startAndNote(first), startAndNote(second)])))).flat().sort((a, b) => a - b);
		// 40 starts at 20 per second, the first one at once: the 40th is about 2 s later, not 1 s.
		expect(times[39] - began).toBeGreaterThanOrEqual(1900);
		const starts = [...booked.values()].sort((a, b) => a - b);
		// A start woken too late takes a new turn: its first booking stays, a slot lost, never one more start per second.
		expect(starts.length).toBeGreaterThanOrEqual(40);
		for (let index = 20; index < starts.length; index++) expect(starts[index] - starts[index - 20]).toBeGreaterThanOrEqual(1000);
	});

	it('a 429 seen by one process pauses the other for Retry-After', async () => {
		const first = limiterSharing(redis.url, 'code-b', 100);
		const second = limiterSharing(redis.url, 'code-b', 100);
		await startTimes(first, 1);
		await first.shared!.onThrottled(100, 1500);
		const began = Date.now();
		await startTimes(second, 1);
		expect(Date.now() - began).toBeGreaterThanOrEqual(1400);
	});

	it('keeps separate credentials apart', async () => {
		const busy = limiterSharing(redis.url, 'code-c', 1);
		await startTimes(busy, 1);
		// With a deadline of now, a start that must wait is refused at once instead of waited for.
		await expect(limiterSharing(redis.url, 'code-c', 1).acquire(undefined, Date.now())).rejects.toThrow(/held back/);
		const release = await limiterSharing(redis.url, 'code-d', 1).acquire(undefined, Date.now());
		release();
	});

	it('an unreachable Redis fails the call with the field to fix, and frees the slot', async () => {
		const limiter = new GatewayLimiter({ maxConcurrent: 1, maxPerSecond: 5 });
		limiter.shared = sharedRateFor({ url: 'redis://127.0.0.1:1' }, 'http://gateway.test', 'code-e');
		await expect(limiter.acquire()).rejects.toThrow(/^"Shared Redis URL for Limits and Send Records": nothing answers at 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
		await expect(limiter.acquire()).rejects.toThrow(/Shared Redis URL for Limits and Send Records/);
	});

	it("decays the learned rate by Redis's clock: one call in 2 s just after the 429, half a million a second 20 minutes later (issue 36 item 2)", async () => {
		const limiter = limiterSharing(redis.url, 'code-h', 0);
		const redisCli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' }).trim();
		const key = `n8n-nodes-data-gateway:rate:${accountKeyOf('http://gateway.test', 'code-h')}`;
		// The state a 429 leaves, `ago` ms before Redis's now; the clock is moved by writing the time of the 429.
		const learnedBefore = (ago: number) => {
			const [secondsText, microseconds] = redisCli('TIME').split('\n');
			redisCli('HSET', key, 'rate', '0.5', 'throttled', String(Number(secondsText) * 1000 + Math.floor(Number(microseconds) / 1000) - ago), 'next', '0');
		};
		learnedBefore(0);
		(await limiter.acquire())();
		// With a deadline of now a start that must wait is refused, and the wait is said: about 2 s.
		expect(await limiter.shared!.waitForStart(0, undefined, Date.now())).toBeGreaterThan(1000);
		learnedBefore(20 * 60_000);
		(await limiter.acquire())();
		expect(await limiter.shared!.waitForStart(0, undefined, Date.now())).toBeLessThanOrEqual(1);
	});

	it('a Retry-After longer than the cap holds each call until its own deadline at most, and teaches no rate (issue 33 item 12)', async () => {
		const limiter = limiterSharing(redis.url, 'code-i', 0);
		await limiter.shared!.onThrottled(0, 5000, true);
		// A call that may wait 300 ms is not refused by a hold the package itself cut to 5 s: it starts at its deadline.
		const release = await limiter.acquire(undefined, Date.now() + 300);
		release();
		const key = `n8n-nodes-data-gateway:rate:${accountKeyOf('http://gateway.test', 'code-i')}`;
		expect(execFileSync('redis-cli', ['-p', String(redis.port), 'HGET', key, 'rate'], { encoding: 'utf8' }).trim()).toBe('');
	});

	it("keeps the credential's keys for an hour after their last use", async () => {
		const limiter = limiterSharing(redis.url, 'code-g', 5);
		await startTimes(limiter, 2);
		await limiter.shared!.onThrottled(5, 100);
		for (const key of ['rate', 'starts']) {
			const [name] = execFileSync('redis-cli', ['-p', String(redis.port), '--scan', '--pattern', `n8n-nodes-data-gateway:${key}:*`], { encoding: 'utf8' }).trim().split('\n');
			const ttl = Number(execFileSync('redis-cli', ['-p', String(redis.port), 'PTTL', name], { encoding: 'utf8' }).trim());
			expect(ttl).toBeGreaterThan(3_500_000);
			expect(ttl).toBeLessThanOrEqual(3_600_000);
		}
	});

	it('logs in with the credential password, and names the field when Redis refuses it', async () => {
		const guarded = await startRedis(() => undefined, { password: 'redis-secret-1' });
		try {
			const right = new GatewayLimiter({ maxConcurrent: 5, maxPerSecond: 5 });
			right.shared = sharedRateFor({ url: guarded.url, password: 'redis-secret-1' }, 'http://gateway.test', 'code-f');
			(await right.acquire())();
			const wrong = new GatewayLimiter({ maxConcurrent: 5, maxPerSecond: 5 });
			wrong.shared = sharedRateFor({ url: guarded.url, password: 'not-it' }, 'http://gateway.test', 'code-f');
			const refusal = await wrong.acquire().then(
				() => undefined,
				(error: Error) => error.message,
			);
			expect(refusal).toMatch(/^"Shared Redis Password": Redis at 127\.0\.0\.1:\d+ refused the login/);
			expect(refusal).not.toContain('not-it');
		} finally {
			await guarded.stop();
		}
	});
});
