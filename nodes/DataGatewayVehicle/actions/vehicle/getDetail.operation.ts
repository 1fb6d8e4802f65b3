import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { ItemParameters } from '../../../shared/n8n/parameters';
import { checkDetailVehicleType, checkPlate, PLATE_FIELD_DESCRIPTION } from '../../../shared/checks/vehicle';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import { countedCall } from '../../../shared/money/bill';
import { simplifyProperties, usesFriendlyNames } from '../../../shared/n8n/description';
import { inputError } from '../../../shared/errors/failures';
import { vehicleDetailSchema, type VehicleDetail } from '../../../shared/gateway/schemas/vehicle';
import { friendlyVehicle } from '../../../shared/output/friendly';
import { toCount, withIsoTimes } from '../../../shared/output/convert';
import { DETAIL_VEHICLE_TYPES } from '../../../shared/gateway/catalog';
import type { BillKind } from '../../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'vehicleDetail';

const showFor = { resource: ['vehicle'], operation: ['getDetail'] };

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
		displayName: 'Vehicle Type',
		name: 'carType',
		type: 'options',
		required: true,
		default: '02',
		options: DETAIL_VEHICLE_TYPES.map((type) => ({ name: `${type.code} ${type.name}`, value: type.code })),
		description: 'Large or small car, ordinary or new-energy',
		displayOptions: { show: showFor },
	},
	...simplifyProperties(showFor),
];

const DATE_FIELDS = ['validityDayEnd', 'ppsDate', 'firstIssueDate', 'retirementDate'];
const COUNT_FIELDS = ['passengers', 'shaft'] as const;

export function simplifyVehicleDetail(detail: VehicleDetail): IDataObject {
	const result: IDataObject = withIsoTimes(detail, DATE_FIELDS) as IDataObject;
	for (const field of COUNT_FIELDS) if (field in detail) result[field] = toCount(detail[field]);
	return result;
}

/** Paid (1.20 yuan a successful call): the gateway masks VIN, plate and engine number with asterisks. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const parameters = new ItemParameters(this);
	const options = callOptions(this);
	const friendly = usesFriendlyNames(this);
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => {
			const plate = checkPlate(parameters.get('carNumber', itemIndex, '') as string);
			if (!plate.ok) throw inputError(this.getNode(), itemIndex, 'Plate Number', plate.value, 'Enter a plate like 京A12345 or 粤BD12345.');
			const type = checkDetailVehicleType(parameters.get('carType', itemIndex, '') as string);
			if (!type.ok) throw inputError(this.getNode(), itemIndex, 'Vehicle Type', type.value, 'Use 01 or 02, or 51 or 52 for new-energy vehicles.');
			return {
				params: { carNumber: plate.value, carType: type.value },
				simplify: parameters.get('simplify', itemIndex, friendly) as boolean,
			};
		},
		shareKey: (plan) => client.questionKey('vehicleDetail', plan.params),
		paid: { operation: 'vehicleDetail', client },
		execute: async (plan) => await countedCall(this, async () => (await client.call('vehicleDetail', plan.params, vehicleDetailSchema, options)).data),
		output: (detail, plan) => (plan.simplify ? (friendly ? friendlyVehicle(detail) : simplifyVehicleDetail(detail)) : (detail as IDataObject)),
	});
}
