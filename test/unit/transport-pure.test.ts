import { z } from 'zod/v4';

import { GatewayLimiter } from '../../nodes/shared/limiter';
import { REDACTED, redactSecret } from '../../nodes/shared/redact';
import { describeSchemaProblem, looseInteger, looseNumber, looseString, oneOrMany, record } from '../../nodes/shared/schemas/envelope';
import { buildQueryString, settingsFromCredentials } from '../../nodes/shared/transport';

describe('query string encoding', () => {
	it('percent-encodes Chinese text as UTF-8 and sends objects as JSON text', () => {
		const query = buildQueryString({ keyword: '北京 科技有限公司', params: { code: '12 34', name: '张三' } });
		const decoded = new URLSearchParams(query);
		expect(decoded.get('keyword')).toBe('北京 科技有限公司');
		expect(JSON.parse(decoded.get('params') as string)).toEqual({ code: '12 34', name: '张三' });
		expect(query).not.toMatch(/[^\x21-\x7e]/); // nothing but printable ASCII on the wire
		expect(query).toContain('%E5%8C%97%E4%BA%AC'); // 北京
	});

	it('leaves out empty values so optional parameters are not sent blank', () => {
		expect(buildQueryString({ carNumber: '京A12345', carCode: '', carType: undefined, x: null })).toBe(
			'carNumber=%E4%BA%ACA12345',
		);
	});
});

describe('redaction', () => {
	it('removes the raw and URL-encoded forms of the secret', () => {
		const secret = 'abc/12+3 x';
		const text = `GET /x?appCode=${encodeURIComponent(secret)} failed for ${secret}`;
		const redacted = redactSecret(text, secret);
		expect(redacted).not.toContain(secret);
		expect(redacted).not.toContain(encodeURIComponent(secret));
		expect(redacted).toContain(REDACTED);
	});
});

describe('tolerant schemas', () => {
	const schema = record({ count: looseNumber, id: looseString, code: looseInteger, items: oneOrMany(record({ a: looseString })) });

	it('accepts numbers as strings, strings as numbers, one object for a list, and keeps unknown fields', () => {
		const parsed = schema.parse({ count: '3', id: 42, code: '0', items: { a: 1 }, extra: { kept: true } });
		expect(parsed).toEqual({ count: 3, id: '42', code: 0, items: [{ a: '1' }], extra: { kept: true } });
	});

	it('names the field that really does not fit', () => {
		const result = schema.safeParse({ count: 'three', id: '1', code: 0, items: [] });
		expect(result.success).toBe(false);
		if (!result.success) expect(describeSchemaProblem(result.error, 'data')).toMatch(/^data\.count: /);
		const nested = z.object({ records: z.array(record({ time: z.string() })) }).safeParse({ records: [{ time: 'x' }, { time: {} }] });
		if (!nested.success) expect(describeSchemaProblem(nested.error, 'data')).toMatch(/^data\.records\[1\]\.time: /);
	});
});

describe('credential settings', () => {
	it('applies defaults and trims the base URL', () => {
		const settings = settingsFromCredentials({ appCodeSecret: ' code ', baseUrl: 'https://gw.example.com/api/' });
		expect(settings).toMatchObject({
			appCode: 'code',
			baseUrl: 'https://gw.example.com/api',
			appCodePlacement: 'query',
			timeoutMs: 30000,
			maxRetries: 3,
			limiter: { maxConcurrent: 10, maxPerSecond: 0 },
		});
	});
});

describe('limiter', () => {
	it('never lets more than maxConcurrent requests run at once', async () => {
		const limiter = new GatewayLimiter({ maxConcurrent: 3, maxPerSecond: 0 });
		let running = 0;
		let peak = 0;
		await Promise.all(
			Array.from({ length: 20 }, async () => {
				const release = await limiter.acquire();
				running++;
				peak = Math.max(peak, running);
				await new Promise((resolve) => setImmediate(resolve));
				running--;
				release();
			}),
		);
		expect(peak).toBe(3);
	});

	it('lowers its rate after a 429 instead of keeping the unlimited pace', () => {
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 });
		expect(limiter.ratePerSecond).toBe(Number.POSITIVE_INFINITY);
		limiter.onThrottled(0);
		expect(Number.isFinite(limiter.ratePerSecond)).toBe(true);
	});

	it('gives the slot back when a waiting request is cancelled', async () => {
		const limiter = new GatewayLimiter({ maxConcurrent: 1, maxPerSecond: 0 });
		const first = await limiter.acquire();
		const controller = new AbortController();
		const waiting = limiter.acquire(controller.signal);
		controller.abort(new Error('cancelled'));
		await expect(waiting).rejects.toThrow('cancelled');
		first();
		const next = await limiter.acquire();
		next();
	});
});
