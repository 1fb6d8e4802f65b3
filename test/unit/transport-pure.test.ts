import { z } from 'zod/v4';

import { refusedForState } from '../../nodes/DataGatewaySms/actions/changeRun';
import { simplifyIdentity } from '../../nodes/DataGatewayTelephone/actions/identify.operation';
import { GatewayFailure } from '../../nodes/shared/errors/failures';
import { GatewayLimiter, LimiterWaitTooLong } from '../../nodes/shared/limits/limiter';
import { REDACTED, redactSecret } from '../../nodes/shared/errors/redact';
import { telephoneIdentitySchema } from '../../nodes/shared/gateway/schemas/telephone';
import { describeSchemaProblem, looseInteger, looseNumber, looseString, oneOrMany, record } from '../../nodes/shared/gateway/schemas/envelope';
import { buildQueryString, connectionProblem } from '../../nodes/shared/transport/attempt';
import { settingsFromCredentials } from '../../nodes/shared/transport/settings';

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

	const secret = 'Zq8+fK29/abXY=secret77';
	it.each([
		['a cut at the end of a query echo', `GET /x?tel=1&appCode=${encodeURIComponent(secret).slice(0, 12)}…`],
		['a cut at the end of a header echo', `Authorization: AppCode ${secret.slice(0, 9)}`],
		['a cut at the start', `${secret.slice(-8)}&tel=1`],
		['the form URLSearchParams writes', `appCode=${new URLSearchParams({ s: secret }).toString().slice(2, 15)}`],
	])('removes a piece of 6 or more characters that %s leaves', (_label, text) => {
		const redacted = redactSecret(text, secret);
		expect(redacted).toContain(REDACTED);
		for (const form of [secret, encodeURIComponent(secret)]) {
			for (let start = 0; start + 6 <= form.length; start++) expect(redacted).not.toContain(form.slice(start, start + 6));
		}
	});

	it.each([
		['a query parameter cut to 5 characters', `GET /telecom/identify?tel=1&appCode=${secret.slice(0, 5)}`, `GET /telecom/identify?tel=1&appCode=${REDACTED}`],
		['a query parameter cut to 1 character, then more parameters', `?appCode=${secret.slice(0, 1)}&tel=1`, `?appCode=${REDACTED}&tel=1`],
		['a header cut to 3 characters', `Authorization: AppCode ${secret.slice(0, 3)}`, `Authorization: AppCode ${REDACTED}`],
		['an echoed JSON field', `{"appCode":"${secret.slice(0, 4)}","tel":"1"}`, `{"appCode":"${REDACTED}","tel":"1"}`],
		['an echoed header in JSON, lower case', `{"authorization":"appcode ${secret.slice(0, 2)}"}`, `{"authorization":"appcode ${REDACTED}"}`],
	])('removes the value of %s, however short', (_label, text, expected) => {
		expect(redactSecret(text, secret)).toBe(expected);
		// Also where the client that knows the code is not at hand: any appCode value is masked.
		expect(redactSecret(text, undefined)).toBe(expected);
	});

	it('leaves sentences that name the appCode alone', () => {
		const hint = 'Paste the appCode of your gateway account; App Code is empty. AppCode is invalid. The gateway is rate-limiting this appCode.';
		expect(redactSecret(hint, secret)).toBe(hint);
	});

	it('leaves text without a piece of the code alone', () => {
		expect(redactSecret('the gateway answered HTTP 500 with internal error', secret)).toBe('the gateway answered HTTP 500 with internal error');
	});
});

describe('connection errors in words', () => {
	it.each([
		['ECONNRESET', /^the connection was closed by the gateway before it answered \(ECONNRESET\)$/],
		['UND_ERR_SOCKET', /^the connection was closed by the gateway before it answered \(UND_ERR_SOCKET\)$/],
		['ECONNREFUSED', /^the gateway refused the connection: nothing answers at the host and port of the Base URL \(ECONNREFUSED\)$/],
		['ENOTFOUND', /^the host name of the Base URL could not be found \(DNS\) \(ENOTFOUND\)$/],
		['UND_ERR_CONNECT_TIMEOUT', /^the connection to the gateway could not be opened in time \(UND_ERR_CONNECT_TIMEOUT\)$/],
		['E_SOMETHING_ELSE', /^the connection to the gateway failed \(E_SOMETHING_ELSE\)$/],
	])('%s: words first, the code after', (code, expected) => {
		expect(connectionProblem(code, Object.assign(new Error('x'), { code }))).toMatch(expected);
	});
	it('without a code, the error text in parentheses', () => {
		expect(connectionProblem(undefined, new Error('socket hang up'))).toBe('the connection to the gateway failed (socket hang up)');
	});
});

describe('telephone flag (Simplify)', () => {
	it.each([
		[1, true],
		['1', true],
		[0, false],
		['0', false],
		[2, null],
		['x', null],
		[null, null],
		[undefined, null],
	])('iszhapian %j -> isFlagged %j', (iszhapian, isFlagged) => {
		const identity = telephoneIdentitySchema.parse({ phone: '13800138000', ...(iszhapian === undefined ? {} : { iszhapian }) });
		expect(simplifyIdentity(identity).isFlagged).toBe(isFlagged);
	});
});

describe('refusals about the state of a signature or template', () => {
	const refusal = (gatewayCode: number, message: string) => new GatewayFailure({ kind: 'gateway-code', operation: 'signatureUpdate', gatewayCode, message });
	it.each([
		[40004, 'state does not allow it'],
		[50000, 'an approved signature cannot be modified'],
		[50000, 'the template is under review'],
		[50000, '签名已审核通过，不能修改'],
		[50000, 'status error'],
	])('code %s "%s" is about the state', (code, message) => expect(refusedForState(refusal(code, message))).toBe(true));
	it.each([
		[40005, 'signature not found'],
		[20001, 'name and remark are required'],
		[10002, 'invalid appCode'],
	])('code %s "%s" is not', (code, message) => expect(refusedForState(refusal(code, message))).toBe(false));
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

	it('with a deadline, does not wait for a pause that ends after it', async () => {
		const limiter = new GatewayLimiter({ maxConcurrent: 10, maxPerSecond: 0 });
		limiter.onThrottled(3_600_000);
		expect(limiter.pausedForMs).toBeGreaterThan(3_500_000);
		await expect(limiter.acquire(undefined, Date.now() + 1000)).rejects.toBeInstanceOf(LimiterWaitTooLong);
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
