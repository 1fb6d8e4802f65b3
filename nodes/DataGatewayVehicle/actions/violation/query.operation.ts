import type { IDataObject } from 'n8n-workflow';

import { checkNumberTail, checkViolationVehicleType } from '../../../shared/checks/vehicle';
import { plateNumberField, plateOf } from '../plateNumberField';
import { violationsSchema, type Violations } from '../../../shared/gateway/schemas/vehicle';
import { friendlyViolations } from '../../../shared/output/friendly';
import { toCount, withIsoTimes } from '../../../shared/output/convert';
import { VIOLATION_VEHICLE_TYPES } from '../../../shared/gateway/catalog';
import { lookupOperation } from '../../../shared/n8n/lookupOperation';
import type { ItemInput } from '../../../shared/n8n/parameters';
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

/** The item's request, read from its fields and checked before anything is paid. */
export function violationRequest(item: ItemInput) {
	const carNumber = plateOf(item);
	const engine = checkNumberTail(item.read('carEngineCode', ''));
	if (!engine.ok) throw item.fail('Engine Number Tail', engine.value, 'Enter only the last letters and digits of the engine number.');
	const frame = checkNumberTail(item.read('carCode', ''));
	if (!frame.ok) throw item.fail('Frame Number Tail', frame.value, 'Enter only the last letters and digits of the frame (VIN) number.');
	const type = checkViolationVehicleType(item.read('carType', ''));
	if (!type.ok) throw item.fail('Vehicle Type', type.value, 'Pick a vehicle type from the list (01–24) or leave it Not Specified.');
	return { carNumber, carEngineCode: engine.value, carCode: frame.value, carType: type.value };
}

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
	request: violationRequest,
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
