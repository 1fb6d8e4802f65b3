import { z } from 'zod/v4';

import { looseNumber, looseString, oneOrMany, record } from './envelope';

const text = looseString.nullable().optional();

/** Violation support rule (docs/gateway-api.md#violation-support-rules). Whether data is one rule or a list is not shown: always a list. */
export const supportRulesSchema = oneOrMany(
	record({
		carEngineLen: looseNumber.nullable().optional(),
		carCodeLen: looseNumber.nullable().optional(),
		preCarNum: text,
		province: text,
		cityName: text,
		carTypeScope: text,
		scope: looseNumber.nullable().optional(),
		jgjId: text,
	}),
);

/** Violation query result (docs/gateway-api.md#violations): `count` is text in the sample. */
export const violationsSchema = record({
	carNumber: text,
	carCode: text,
	carEngineCode: text,
	count: text,
	carType: text,
	createDateStr: text,
	records: z
		.array(
			record({
				time: text,
				degree: text,
				reason: text,
				address: text,
				department: text,
				cityName: text,
				money: text,
				code: text,
			}),
		)
		.nullable()
		.optional()
		.transform((records) => records ?? []),
});

const VEHICLE_DETAIL_FIELDS = [
	'remark', 'vehicleModelc', 'bodyColor', 'vehicleStatus', 'validityDayEnd', 'ppsDate', 'frontTread', 'brandName',
	'passengers', 'plateType', 'vin', 'plateNumber', 'maxJourney', 'useType', 'rearTread', 'engineModel', 'engineNumber',
	'shaft', 'wheelBase', 'loadWeight', 'fuelType', 'curbWeight', 'firstIssueDate', 'vehicleType', 'crossWeight',
	'retirementDate', 'cc',
] as const;

/** Vehicle detail (docs/gateway-api.md#vehicle-detail): every field is text. */
export const vehicleDetailSchema = record(
	Object.fromEntries(VEHICLE_DETAIL_FIELDS.map((field) => [field, text])) as Record<(typeof VEHICLE_DETAIL_FIELDS)[number], typeof text>,
);

export type Violations = z.output<typeof violationsSchema>;
export type VehicleDetail = z.output<typeof vehicleDetailSchema>;
