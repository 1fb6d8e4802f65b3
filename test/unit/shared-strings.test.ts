import { MAX_SHARED_STRINGS, shareStrings } from '../../nodes/shared/state/sharedStrings';

/** Two equal strings that are not the same string in memory (JSON.parse gives each answer its own). */
const parsed = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("an execution's remembered answers share one copy of each short text", () => {
	it('equal short texts of two answers, nested ones included, become one string; values are unchanged', () => {
		const strings = new Map<string, string>();
		const first = parsed({ province: '北京', sp: '移动', hy: { city: '北京' }, tags: ['骚扰'] });
		const second = parsed({ province: '北京', sp: '移动', hy: { city: '北京' }, tags: ['骚扰'] });
		shareStrings(first, strings);
		shareStrings(second, strings);
		expect(second).toEqual(first);
		expect(strings.get('北京')).toBe(first.province);
		expect(strings.get('移动')).toBe(first.sp);
		expect(strings.get('骚扰')).toBe(first.tags[0]);
		expect(strings.size).toBe(3);
	});

	it('leaves long texts (phone numbers, addresses), class instances and other values as they are', () => {
		const strings = new Map<string, string>();
		class Kept {
			city = '上海';
		}
		const kept = new Kept();
		const answer = parsed({ phone: '13800138000', count: 3, flag: true, none: null });
		shareStrings(answer, strings);
		shareStrings(kept, strings);
		expect(answer).toEqual({ phone: '13800138000', count: 3, flag: true, none: null });
		expect(strings.size).toBe(0);
	});

	it('holds at most MAX_SHARED_STRINGS texts per execution', () => {
		const strings = new Map<string, string>();
		shareStrings(Array.from({ length: MAX_SHARED_STRINGS + 50 }, (_, index) => `t${index}`), strings);
		expect(strings.size).toBe(MAX_SHARED_STRINGS);
	});
});
