import type { INodeProperties } from 'n8n-workflow';

import { PLATE_FIELD_DESCRIPTION } from '../../shared/checks/vehicle';

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
