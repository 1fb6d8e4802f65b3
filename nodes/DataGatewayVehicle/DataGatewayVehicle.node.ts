import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { gatewayMethods, nodeSkeleton, resourceProperty } from '../shared/n8n/description';
import { router } from './actions/router';
import * as vehicle from './actions/vehicle';
import * as violation from './actions/violation';

export class DataGatewayVehicle implements INodeType {
	description: INodeTypeDescription = {
		...nodeSkeleton('action'),
		displayName: 'Data Gateway Vehicle',
		name: 'dataGatewayVehicle',
		icon: { light: 'file:dataGatewayVehicle.svg', dark: 'file:dataGatewayVehicle.dark.svg' },
		group: ['transform'],
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		description: 'Look up traffic violations and vehicle registration details by plate number',
		defaults: { name: 'Data Gateway Vehicle' },
		usableAsTool: true,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: [
			resourceProperty([
				{ name: 'Violation', value: 'violation' },
				{ name: 'Vehicle', value: 'vehicle' },
			]),
			...violation.description,
			...vehicle.description,
		],
	};

	methods = gatewayMethods;

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
