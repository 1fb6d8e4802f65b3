import type { INodeType, INodeTypeDescription } from 'n8n-workflow';

import { executeByRouter, gatewayMethods, NODE_VERSIONS_TO_1_4, nodeSkeleton } from '../shared/n8n/description';
import * as identify from './actions/identify.operation';
import { router } from './actions/router';
import { TELEPHONE_FREE_DAILY_CALLS } from '../shared/gateway/catalog';
import { priceNotice } from '../shared/n8n/priceNotice';
import { readmeUrl } from '../shared/n8n/readmeLink';

export class DataGatewayTelephone implements INodeType {
	description: INodeTypeDescription = {
		// 1.2: the number as given beside the normalised one; 1.3: failed items on the error output keep the item's input; 1.4: error-branch items say the error in `message` and the fix in `details`.
		...nodeSkeleton('action', NODE_VERSIONS_TO_1_4),
		displayName: 'Data Gateway Telephone',
		name: 'dataGatewayTelephone',
		icon: { light: 'file:dataGatewayTelephone.svg', dark: 'file:dataGatewayTelephone.dark.svg' },
		group: ['transform'],
		// As the other nodes' "operation: resource"; this node has one resource.
		subtitle: '={{ $parameter["operation"] + ": phone number" }}',
		documentationUrl: readmeUrl('data-gateway-telephone'),
		description:
			'Identify a mobile or landline phone number: region, carrier, and whether users reported it as fraud, spam, marketing or advertising',
		defaults: { name: 'Data Gateway Telephone' },
		usableAsTool: true,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: [
			priceNotice(`Identify is free for ${TELEPHONE_FREE_DAILY_CALLS} calls a day (without limit for members)`, 'data-gateway-telephone'),
			{
				displayName: 'Operation',
				name: 'operation',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'Identify',
						value: 'identify',
						description: 'Region, carrier and fraud or spam reports of a phone number (free within the daily quota)',
						action: 'Identify a phone number',
					},
				],
				default: 'identify',
			},
			...identify.description,
		],
	};

	methods = gatewayMethods;

	execute = executeByRouter(router);
}
