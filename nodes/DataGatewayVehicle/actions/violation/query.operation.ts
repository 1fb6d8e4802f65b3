import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { ItemParameters } from '../../../shared/n8n/parameters';
import { checkNumberTail, checkPlate, checkViolationVehicleType, PLATE_FIELD_DESCRIPTION } from '../../../shared/checks/vehicle';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import { countedCall } from '../../../shared/money/bill';
import { simplifyProperties, usesFriendlyNames } from '../../../shared/n8n/description';
import { inputError } from '../../../shared/errors/failures';
import { violationsSchema, type Violations } from '../../../shared/gateway/schemas/vehicle';
import { friendlyViolations } from '../../../shared/output/friendly';
import { toCount, withIsoTimes } from '../../../shared/output/convert';
import { VIOLATION_VEHICLE_TYPES } from '../../../shared/gateway/catalog';
import type { BillKind } from '../../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'violationQuery';

const showFor = { resource: ['violation'], operation: ['query'] };

export const description: INodeProperties[] = [
	{
		displayName: 'Plate Number',
		name: 'carNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: '京A12345',
		description: PLATE_FIELD_DESCRIPTION,
		displayOptions: { show: showFor },
	},
	{
		displayName: 'Engine Number Tail',
		name: 'carEngineCode',
		type: 'string',
		default: '',
		description:
			'Last characters of the engine number, required by some regions (usually 4 or 6). Get Support Rules tells how many a region needs.',
		displayOptions: { show: showFor },
	},
	{
		displayName: 'Frame Number Tail',
		name: 'carCode',
		type: 'string',
		default: '',
		description:
			'Last characters of the frame (VIN) number, required by some regions (usually 4 or 6). Get Support Rules tells how many a region needs.',
		displayOptions: { show: showFor },
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
		displayOptions: { show: showFor },
	},
	...simplifyProperties(showFor),
];

export function simplifyViolations(violations: Violations): IDataObject {
	return {
		...withIsoTimes(violations, ['createDateStr']),
		count: toCount(violations.count),
		records: violations.records.map((record) => ({ ...withIsoTimes(record, ['time']), money: toCount(record.money) ?? record.money })),
	} as IDataObject;
}

/** Paid (0.04 yuan a successful call): asked once per distinct plate and tails in an execution. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const parameters = new ItemParameters(this);
	const options = callOptions(this);
	const friendly = usesFriendlyNames(this);
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => {
			const fail = (field: string, problem: string, fix: string) => inputError(this.getNode(), itemIndex, field, problem, fix);
			const plate = checkPlate(parameters.get('carNumber', itemIndex, '') as string);
			if (!plate.ok) throw fail('Plate Number', plate.value, 'Enter a plate like 京A12345 or 粤BD12345.');
			const engine = checkNumberTail(parameters.get('carEngineCode', itemIndex, '') as string);
			if (!engine.ok) throw fail('Engine Number Tail', engine.value, 'Enter only the last letters and digits of the engine number.');
			const frame = checkNumberTail(parameters.get('carCode', itemIndex, '') as string);
			if (!frame.ok) throw fail('Frame Number Tail', frame.value, 'Enter only the last letters and digits of the frame (VIN) number.');
			const type = checkViolationVehicleType(parameters.get('carType', itemIndex, '') as string);
			if (!type.ok) throw fail('Vehicle Type', type.value, 'Pick a vehicle type from the list (01–24) or leave it Not Specified.');
			return {
				params: { carNumber: plate.value, carEngineCode: engine.value, carCode: frame.value, carType: type.value },
				simplify: parameters.get('simplify', itemIndex, friendly) as boolean,
			};
		},
		shareKey: (plan) => client.questionKey('violationQuery', plan.params),
		paid: { operation: 'violationQuery', client },
		execute: async (plan) => await countedCall(this, async () => (await client.call('violationQuery', plan.params, violationsSchema, options)).data),
		output: (violations, plan) => (plan.simplify ? (friendly ? friendlyViolations(violations) : simplifyViolations(violations)) : (violations as IDataObject)),
	});
}
