import fc from 'fast-check';
import { z } from 'zod/v4';

import { copyrightPageSchema, enterpriseDetailSchema } from '../../nodes/shared/gateway/schemas/enterprise';
import { envelopeSchema, looseInteger, looseString, oneOrMany, record } from '../../nodes/shared/gateway/schemas/envelope';
import { parseAnswer } from '../../nodes/shared/gateway/schemas/fastParse';
import { sendResultSchema, signatureSchema, smsTaskSchema, templateSchema } from '../../nodes/shared/gateway/schemas/sms';
import { telephoneIdentitySchema } from '../../nodes/shared/gateway/schemas/telephone';
import { supportRulesSchema, vehicleDetailSchema, violationsSchema } from '../../nodes/shared/gateway/schemas/vehicle';
import { htmlToText } from '../../nodes/shared/output/convert';

/** A value with its objects' keys in order (and undefined members kept), so that key order counts in toEqual. */
function ordered(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(ordered);
	if (value !== null && typeof value === 'object') return Object.keys(value).map((key) => [key, ordered((value as Record<string, unknown>)[key])]);
	return value;
}

function expectSameAsZod(schema: z.ZodType, value: unknown) {
	const fast = parseAnswer(schema, value);
	const zod = schema.safeParse(value);
	expect(fast.success).toBe(zod.success);
	if (fast.success && zod.success) expect(ordered(fast.data)).toEqual(ordered(zod.data));
	if (!fast.success && !zod.success) expect(fast.error.issues).toEqual(zod.error.issues);
}

/** What a gateway might send in a field: the declared type, its drifts, and nonsense. */
const fieldValue = fc.oneof(
	fc.string({ maxLength: 6 }),
	fc.constantFrom('12', '-3', ' 7 ', '1.5', 'abc', ''),
	fc.integer({ min: -5, max: 600 }),
	fc.double({ noNaN: false }),
	fc.boolean(),
	fc.constant(null),
	fc.constant(undefined),
	fc.dictionary(fc.constantFrom('name', 'city', 'x'), fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.constant(null)), { maxKeys: 3 }),
	fc.array(fc.integer(), { maxLength: 2 }),
);

/** An object with some of the schema's fields (any value), maybe extra ones, in any order. */
function answerFor(fields: string[], nested: Record<string, fc.Arbitrary<unknown>> = {}) {
	const known = fc.record(Object.fromEntries(fields.map((field) => [field, nested[field] ? fc.oneof(nested[field], fieldValue) : fieldValue])), { requiredKeys: [] });
	const extra = fc.dictionary(fc.constantFrom('extra', 'other', '10', 'toString', 'constructor'), fieldValue, { maxKeys: 2 });
	return fc.tuple(known, extra).chain(([own, more]) => {
		const entries = Object.entries({ ...own, ...more });
		const inAnyOrder = fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length });
		return fc.oneof(fc.constant(entries), inAnyOrder).map((ordered) => Object.fromEntries(ordered));
	});
}

const shapeOf = (schema: z.ZodType) => Object.keys((schema as unknown as { shape: Record<string, unknown> }).shape);

describe('answers read past zod when already in shape (parseAnswer)', () => {
	it('hands over exactly what zod would, for any answer of every schema', () => {
		const hy = answerFor(['city', 'lng', 'lat', 'name', 'addr', 'tel']);
		const cases: Array<[z.ZodType, fc.Arbitrary<unknown>]> = [
			[envelopeSchema, answerFor(['code', 'message', 'data'])],
			[telephoneIdentitySchema, answerFor(shapeOf(telephoneIdentitySchema), { hy })],
			[vehicleDetailSchema, answerFor(shapeOf(vehicleDetailSchema))],
			[violationsSchema, answerFor(shapeOf(violationsSchema), { records: fc.array(answerFor(['time', 'money']), { maxLength: 2 }) })],
			[supportRulesSchema, fc.oneof(answerFor(['preCarNum', 'scope']), fc.array(answerFor(['preCarNum', 'scope']), { maxLength: 3 }))],
			[copyrightPageSchema, answerFor(shapeOf(copyrightPageSchema))],
			[enterpriseDetailSchema, answerFor(['sign', 'data', 'name'], { data: answerFor(['name', 'status']) })],
			[sendResultSchema, answerFor(['id'])],
			[smsTaskSchema, answerFor(shapeOf(smsTaskSchema))],
			[signatureSchema, answerFor(shapeOf(signatureSchema))],
			[templateSchema, answerFor(shapeOf(templateSchema))],
			[z.object({ kept: looseString, count: looseInteger.optional() }), answerFor(['kept', 'count'])],
			[oneOrMany(record({ id: looseString })), fc.oneof(answerFor(['id']), fc.array(answerFor(['id']), { maxLength: 3 }))],
		];
		for (const [schema, answers] of cases) {
			fc.assert(fc.property(fc.oneof(answers, fieldValue), (value) => expectSameAsZod(schema, value)), { numRuns: 400 });
		}
	});

	it('takes the shortcut for a typical answer, and leaves zod the answers it must convert', () => {
		const answer = { iszhapian: 1, province: '北京', city: '北京', sp: '移动', phone: '13912345678', rpt_cnt: 12, hy: null, countDesc: '被<b>12</b>人标记', note: 'kept' };
		const zodParse = jest.spyOn(telephoneIdentitySchema, 'safeParse');
		try {
			const read = parseAnswer(telephoneIdentitySchema, answer);
			expect(read).toEqual({ success: true, data: answer });
			// Nothing would change, so nothing is copied; fields out of the schema's order come back in it, as from zod.
			expect(read.data).toBe(answer);
			const reordered = parseAnswer(telephoneIdentitySchema, { iszhapian: 0, city: '北京', sp: '移动', hy: null, province: '北京' });
			expect(Object.keys(reordered.data ?? {})).toEqual(['iszhapian', 'province', 'city', 'sp', 'hy']);
			expect(zodParse).not.toHaveBeenCalled();
			// rpt_cnt as text is converted to a number: zod does that.
			expect(parseAnswer(telephoneIdentitySchema, { ...answer, rpt_cnt: '12' })).toEqual({ success: true, data: answer });
			expect(zodParse).toHaveBeenCalledTimes(1);
		} finally {
			zodParse.mockRestore();
		}
	});
});

describe('HTML in the telephone description (htmlToText)', () => {
	it('drops tags, turns <br> into line breaks, decodes entities once, and collapses spaces', () => {
		expect(htmlToText('该号码被<b>12</b>人标记')).toBe('该号码被12人标记');
		expect(htmlToText('a<br>b<BR/>c  d\t e')).toBe('a\nb\nc d e');
		expect(htmlToText('&lt;b&gt; &amp;lt; &quot;x&quot; &#39;y&#39;&nbsp;z')).toBe('<b> &lt; "x" \'y\' z');
		expect(htmlToText('<a <br> b>rest')).toBe('rest');
		expect(htmlToText('plain text')).toBe('plain text');
		expect(htmlToText(12)).toBeNull();
	});
});
