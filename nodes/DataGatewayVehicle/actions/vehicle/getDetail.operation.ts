import type { IDataObject } from 'n8n-workflow';

import { checkDetailVehicleType, checkPlate } from '../../../shared/checks/vehicle';
import { plateNumberField } from '../plateNumberField';
import { vehicleDetailSchema, type VehicleDetail } from '../../../shared/gateway/schemas/vehicle';
import { friendlyVehicle } from '../../../shared/output/friendly';
import { toCount, withIsoTimes } from '../../../shared/output/convert';
import { DETAIL_VEHICLE_TYPES } from '../../../shared/gateway/catalog';
import { lookupOperation } from '../../../shared/n8n/lookupOperation';

const DATE_FIELDS = ['validityDayEnd', 'ppsDate', 'firstIssueDate', 'retirementDate'];
const COUNT_FIELDS = ['passengers', 'shaft'] as const;

export function simplifyVehicleDetail(detail: VehicleDetail): IDataObject {
	const result: IDataObject = withIsoTimes(detail, DATE_FIELDS) as IDataObject;
	for (const field of COUNT_FIELDS) if (field in detail) result[field] = toCount(detail[field]);
	return result;
}

/** Paid (1.20 yuan a successful call): the gateway masks VIN, plate and engine number with asterisks. */
export const { description, execute, bill } = lookupOperation({
	operation: 'vehicleDetail',
	show: { resource: ['vehicle'], operation: ['getDetail'] },
	fields: [
		plateNumberField,
		{
			displayName: 'Vehicle Type',
			name: 'carType',
			type: 'options',
			required: true,
			default: '02',
			options: DETAIL_VEHICLE_TYPES.map((type) => ({ name: `${type.code} ${type.name}`, value: type.code })),
			description: 'Large or small car, ordinary or new-energy',
		},
	],
	request: (read, fail) => {
		const plate = checkPlate(read('carNumber', ''));
		if (!plate.ok) throw fail('Plate Number', plate.value, 'Enter a plate like 京A12345 or 粤BD12345.');
		const type = checkDetailVehicleType(read('carType', ''));
		if (!type.ok) throw fail('Vehicle Type', type.value, 'Use 01 or 02, or 51 or 52 for new-energy vehicles.');
		return { carNumber: plate.value, carType: type.value };
	},
	schema: vehicleDetailSchema,
	simplified: { v1: simplifyVehicleDetail, friendly: friendlyVehicle },
});
