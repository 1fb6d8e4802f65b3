import type { IDataObject } from 'n8n-workflow';

import { checkPlatePrefix } from '../../../shared/checks/vehicle';
import { supportRulesSchema } from '../../../shared/gateway/schemas/vehicle';
import { lookupOperation } from '../../../shared/n8n/lookupOperation';
import type { ItemInput } from '../../../shared/n8n/parameters';

/** The item's request, read from its fields and checked. */
export function supportRulesRequest(item: ItemInput) {
	const prefix = checkPlatePrefix(item.read('preCarNum', ''));
	if (!prefix.ok) {
		throw item.fail('Plate Prefix', prefix.value, 'Enter the first character of the plate (e.g. 京), optionally with its letter (e.g. 粤B), or leave it empty.');
	}
	return { preCarNum: prefix.value, province: String(item.read('province', '')).trim() };
}

/** Free: one output item per rule, telling which engine and frame number tails a region needs. */
export const { description, execute, bill } = lookupOperation({
	operation: 'violationSupport',
	show: { resource: ['violation'], operation: ['getSupportRules'] },
	fields: [
		{
			displayName: 'Plate Prefix',
			name: 'preCarNum',
			type: 'string',
			default: '',
			placeholder: '京',
			description:
				'Plate prefix to look up, e.g. 粤B. For municipalities (Beijing, Shanghai, Tianjin, Chongqing) only the first character. Leave empty for all.',
		},
		{
			displayName: 'Province',
			name: 'province',
			type: 'string',
			default: '',
			placeholder: '广东',
			description: 'Province name to look up. Leave empty for all.',
		},
	],
	request: supportRulesRequest,
	schema: supportRulesSchema,
	raw: (rules) => rules as IDataObject[],
});
