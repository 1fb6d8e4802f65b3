import type { IDataObject } from 'n8n-workflow';

import { checkNumberTail, checkPlate, checkViolationVehicleType } from '../../../shared/checks/vehicle';
import { plateNumberField } from '../plateNumberField';
import { violationsSchema, type Violations } from '../../../shared/gateway/schemas/vehicle';
import { friendlyViolations } from '../../../shared/output/friendly';
import { toCount, withIsoTimes } from '../../../shared/output/convert';
import { VIOLATION_VEHICLE_TYPES } from '../../../shared/gateway/catalog';
import { lookupOperation } from '../../../shared/n8n/lookupOperation';
import { fingerprint } from '../../../shared/lookups/onlyNew';

export function simplifyViolations(violations: Violations): IDataObject {
	return {
		...withIsoTimes(violations, ['createDateStr']),
		count: toCount(violations.count),
		records: violations.records.map((record) => ({ ...withIsoTimes(record, ['time']), money: toCount(record.money) ?? record.money })),
	} as IDataObject;
}

/** Time, place, reason and code name a violation; its fine or handling state may change later without making it new. */
const violationPrint = (record: Violations['records'][number]) => fingerprint([record.time, record.address, record.reason, record.code]);

/** Paid (0.04 yuan a successful call): asked once per distinct plate and tails in an execution. */
export const { description, execute, bill } = lookupOperation({
	operation: 'violationQuery',
	show: { resource: ['violation'], operation: ['query'] },
	fields: [
		plateNumberField,
		{
			displayName: 'Engine Number Tail',
			name: 'carEngineCode',
			type: 'string',
			default: '',
			description:
				'Last characters of the engine number, required by some regions (usually 4 or 6). Get Support Rules tells how many a region needs.',
		},
		{
			displayName: 'Frame Number Tail',
			name: 'carCode',
			type: 'string',
			default: '',
			description:
				'Last characters of the frame (VIN) number, required by some regions (usually 4 or 6). Get Support Rules tells how many a region needs.',
		},
		{
			displayName: 'Vehicle Type',
			name: 'carType',
			type: 'options',
			default: '',
			description: 'The vehicle type code; leave as Not Specified to let the gateway decide',
			options: [
				{ name: 'Not Specified', value: '' },
				...VIOLATION_VEHICLE_TYPES.map((type) => ({ name: `${type.code} ${type.name}`, value: type.code })),
			],
		},
	],
	request: (read, fail) => {
		const plate = checkPlate(read('carNumber', ''));
		if (!plate.ok) throw fail('Plate Number', plate.value, 'Enter a plate like 京A12345 or 粤BD12345.');
		const engine = checkNumberTail(read('carEngineCode', ''));
		if (!engine.ok) throw fail('Engine Number Tail', engine.value, 'Enter only the last letters and digits of the engine number.');
		const frame = checkNumberTail(read('carCode', ''));
		if (!frame.ok) throw fail('Frame Number Tail', frame.value, 'Enter only the last letters and digits of the frame (VIN) number.');
		const type = checkViolationVehicleType(read('carType', ''));
		if (!type.ok) throw fail('Vehicle Type', type.value, 'Pick a vehicle type from the list (01–24) or leave it Not Specified.');
		return { carNumber: plate.value, carEngineCode: engine.value, carCode: frame.value, carType: type.value };
	},
	schema: violationsSchema,
	simplified: { v1: simplifyViolations, friendly: friendlyViolations },
	news: {
		kind: 'records',
		option: {
			displayName: 'Only New Violations',
			name: 'onlyNewViolations',
			description:
				'Whether to output only violations this node has not output before (for scheduled checks); a plate with none produces no item',
		},
		fingerprints: (violations) => violations.records.map(violationPrint),
		narrow: (violations, isNew) => {
			const records = violations.records.filter((record) => isNew(violationPrint(record)));
			return { ...violations, count: String(records.length), records };
		},
		bill: { checked: ['plate', 'plates'], withNews: 'with new violations' },
	},
});
