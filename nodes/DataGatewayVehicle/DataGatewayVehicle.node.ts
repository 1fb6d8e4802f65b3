import type { INodeType, INodeTypeDescription } from 'n8n-workflow';

import { executeByRouter, gatewayMethods, OPERATION_SUBTITLE, NODE_VERSIONS_TO_1_2, nodeSkeleton, resourceProperty } from '../shared/n8n/description';
import { router } from './actions/router';
import { PRICES_YUAN } from '../shared/gateway/catalog';
import { priceNotice } from '../shared/n8n/priceNotice';
import { readmeUrl } from '../shared/n8n/readmeLink';
import * as vehicle from './actions/vehicle';
import * as violation from './actions/violation';

export class DataGatewayVehicle implements INodeType {
	description: INodeTypeDescription = {
		// 1.2: failed items on the error output keep the item's input; 1.3: error-branch items say the error in `message` and the fix in `details`.
		...nodeSkeleton('action', [...NODE_VERSIONS_TO_1_2, 1.3]),
		displayName: 'Data Gateway Vehicle',
		name: 'dataGatewayVehicle',
		icon: { light: 'file:dataGatewayVehicle.svg', dark: 'file:dataGatewayVehicle.dark.svg' },
		group: ['transform'],
		subtitle: OPERATION_SUBTITLE,
		documentationUrl: readmeUrl('data-gateway-vehicle'),
		description: 'Look up traffic violations and vehicle registration details by plate number',
		defaults: { name: 'Data Gateway Vehicle' },
		usableAsTool: true,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: [
			resourceProperty([
				{ name: 'Violation', value: 'violation' },
				{ name: 'Vehicle', value: 'vehicle' },
			]),
			priceNotice(`Query Violations ${PRICES_YUAN.violationQuery} yuan and Get Vehicle Detail ${PRICES_YUAN.vehicleDetail} yuan per answered call; support rules free`, 'data-gateway-vehicle'),
			...violation.description,
			...vehicle.description,
		],
	};

	methods = gatewayMethods;

	execute = executeByRouter(router);
}
