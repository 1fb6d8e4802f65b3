import type { IExecuteFunctions, INodeParameters } from 'n8n-workflow';

import { ItemParameters } from '../../nodes/shared/n8n/parameters';

function contextWith(parameters: INodeParameters) {
	const reads: Array<[string, number]> = [];
	const ctx = {
		getNode: () => ({ parameters }),
		getNodeParameter: (name: string, itemIndex: number, fallback: unknown) => {
			reads.push([name, itemIndex]);
			const raw = name.split('.').reduce<unknown>((value, part) => (value as Record<string, unknown> | undefined)?.[part], parameters) ?? fallback;
			return typeof raw === 'string' && raw.startsWith('=') ? `${raw.slice(1)}#${itemIndex}` : raw;
		},
	} as unknown as IExecuteFunctions;
	return { reads, parameters: new ItemParameters(ctx) };
}

describe('item parameters', () => {
	it('reads a fixed value once and hands it to every item', () => {
		const { reads, parameters } = contextWith({ simplify: true, options: { pageSize: 20 } });
		for (const item of [0, 1, 2]) {
			expect(parameters.get('simplify', item, false)).toBe(true);
			expect(parameters.get('options', item, {})).toEqual({ pageSize: 20 });
			expect(parameters.get('absent', item, 'fallback')).toBe('fallback');
		}
		expect(reads).toEqual([['simplify', 0], ['options', 0], ['absent', 0]]);
	});

	it('reads an expression, also one inside a collection, for every item', () => {
		const { reads, parameters } = contextWith({ phone: '={{ $json.phone }}', options: { pageSize: '={{ $json.size }}' } });
		expect([0, 1].map((item) => parameters.get('phone', item, ''))).toEqual(['{{ $json.phone }}#0', '{{ $json.phone }}#1']);
		parameters.get('options', 0, {});
		parameters.get('options', 1, {});
		expect(reads).toEqual([['phone', 0], ['phone', 1], ['options', 0], ['options', 1]]);
	});

	it('reads an expression once per item, however often the item asks for it', () => {
		const { reads, parameters } = contextWith({ phoneNumber: '={{ $json.phone }}' });
		for (const item of [0, 1]) {
			expect(parameters.get('phoneNumber', item, '')).toBe(`{{ $json.phone }}#${item}`);
			expect(parameters.get('phoneNumber', item, '')).toBe(`{{ $json.phone }}#${item}`);
		}
		// Back to an earlier item (a later read for an error item): read again, not another item's value.
		expect(parameters.get('phoneNumber', 0, '')).toBe('{{ $json.phone }}#0');
		expect(reads).toEqual([['phoneNumber', 0], ['phoneNumber', 1], ['phoneNumber', 0]]);
	});

	it('reads a dotted path with an expression inside for every item, and one without once', () => {
		const { reads, parameters } = contextWith({ variables: { variable: [{ name: 'code', value: '={{ $json.code }}' }] }, fixed: { variable: [{ name: 'code', value: '1234' }] } });
		expect([0, 1].map((item) => parameters.get('variables.variable', item, []))).toHaveLength(2);
		for (const item of [0, 1]) parameters.get('fixed.variable', item, []);
		expect(reads).toEqual([['variables.variable', 0], ['variables.variable', 1], ['fixed.variable', 0]]);
	});
});
