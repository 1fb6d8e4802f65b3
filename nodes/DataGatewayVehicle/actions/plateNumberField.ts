import type { INodeProperties } from 'n8n-workflow';

import { checkPlate, PLATE_FIELD_DESCRIPTION } from '../../shared/checks/vehicle';
import type { ItemInput } from '../../shared/n8n/parameters';

/** The Plate Number field both vehicle operations ask for. */
export const plateNumberField: INodeProperties = {
	displayName: 'Plate Number',
	name: 'carNumber',
	type: 'string',
	required: true,
	default: '',
	placeholder: '京A12345',
	description: PLATE_FIELD_DESCRIPTION,
};

/** The item's plate, normalised and checked: the request of both vehicle operations. */
export function plateOf(item: ItemInput): string {
	const plate = checkPlate(item.read('carNumber', ''));
	if (!plate.ok) throw item.fail('Plate Number', plate.value, 'Enter a plate like 京A12345 or 粤BD12345.');
	return plate.value;
}
