import type { IDataObject } from 'n8n-workflow';

import { checkDetailVehicleType } from '../../../shared/checks/vehicle';
import { plateNumberField, plateOf } from '../plateNumberField';
import { vehicleDetailSchema, type VehicleDetail } from '../../../shared/gateway/schemas/vehicle';
import { friendlyVehicle } from '../../../shared/output/friendly';
import { toCount, withIsoTimes } from '../../../shared/output/convert';
import { DETAIL_VEHICLE_TYPES } from '../../../shared/gateway/catalog';
import { lookupOperation } from '../../../shared/n8n/lookupOperation';
import type { ItemInput } from '../../../shared/n8n/parameters';

const DATE_FIELDS = ['validityDayEnd', 'ppsDate', 'firstIssueDate', 'retirementDate'];
const COUNT_FIELDS = ['passengers', 'shaft'] as const;

export function simplifyVehicleDetail(detail: VehicleDetail): IDataObject {
	const result: IDataObject = withIsoTimes(detail, DATE_FIELDS) as IDataObject;
	for (const field of COUNT_FIELDS) if (field in detail) result[field] = toCount(detail[field]);
	return result;
}

/** The item's request, read from its fields and checked before anything is paid. */
export function vehicleDetailRequest(item: ItemInput) {
	const carNumber = plateOf(item);
	const type = checkDetailVehicleType(item.read('carType', ''));
	if (!type.ok) throw item.fail('Vehicle Type', type.value, 'Use 01 or 02, or 51 or 52 for new-energy vehicles.');
	return { carNumber, carType: type.value };
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
	request: vehicleDetailRequest,
	schema: vehicleDetailSchema,
	simplified: { v1: simplifyVehicleDetail, friendly: friendlyVehicle },
});
