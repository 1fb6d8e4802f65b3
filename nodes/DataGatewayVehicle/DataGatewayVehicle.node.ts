import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { gatewayMethods, LATEST_NODE_VERSION, mainConnection, NODE_VERSIONS } from '../shared/n8n/description';
import { readmeUrl } from '../shared/n8n/readmeLink';
import { router } from './actions/router';
import { PRICES_YUAN } from '../shared/gateway/catalog';
import { priceNotice } from '../shared/n8n/priceNotice';
import * as vehicle from './actions/vehicle';
import * as violation from './actions/violation';

export class DataGatewayVehicle implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Data Gateway Vehicle',
		name: 'dataGatewayVehicle',
		icon: { light: 'file:dataGatewayVehicle.svg', dark: 'file:dataGatewayVehicle.dark.svg' },
		group: ['transform'],
		version: NODE_VERSIONS,
		defaultVersion: LATEST_NODE_VERSION,
		// Every node's subtitle reads "operation: resource" in words, e.g. "send and check: message".
		subtitle: '={{ ($parameter["operation"] + ": " + $parameter["resource"]).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase() }}',
		documentationUrl: readmeUrl('data-gateway-vehicle'),
		description: 'Look up traffic violations and vehicle registration details by plate number',
		defaults: { name: 'Data Gateway Vehicle' },
		usableAsTool: true,
		inputs: mainConnection,
		outputs: mainConnection,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Violation', value: 'violation' },
					{ name: 'Vehicle', value: 'vehicle' },
				],
				default: 'violation',
			},
			priceNotice(`Query Violations ${PRICES_YUAN.violationQuery} yuan and Get Vehicle Detail ${PRICES_YUAN.vehicleDetail} yuan per answered call; support rules free`, 'data-gateway-vehicle'),
			...violation.description,
			...vehicle.description,
		],
	};

	methods = gatewayMethods;

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
