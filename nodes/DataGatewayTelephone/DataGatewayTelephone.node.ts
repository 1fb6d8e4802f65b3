import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { gatewayMethods, LATEST_NODE_VERSION, mainConnection, NODE_VERSIONS } from '../shared/n8n/description';
import { readmeUrl } from '../shared/n8n/readmeLink';
import * as identify from './actions/identify.operation';
import { router } from './actions/router';
import { TELEPHONE_FREE_DAILY_CALLS } from '../shared/gateway/catalog';
import { priceNotice } from '../shared/n8n/priceNotice';

export class DataGatewayTelephone implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Data Gateway Telephone',
		name: 'dataGatewayTelephone',
		icon: { light: 'file:dataGatewayTelephone.svg', dark: 'file:dataGatewayTelephone.dark.svg' },
		group: ['transform'],
		version: NODE_VERSIONS,
		defaultVersion: LATEST_NODE_VERSION,
		// As the other nodes' "operation: resource"; this node has one resource.
		subtitle: '={{ $parameter["operation"] + ": phone number" }}',
		documentationUrl: readmeUrl('data-gateway-telephone'),
		description:
			'Identify a mobile or landline phone number: region, carrier, and whether users reported it as fraud, spam, marketing or advertising',
		defaults: { name: 'Data Gateway Telephone' },
		usableAsTool: true,
		inputs: mainConnection,
		outputs: mainConnection,
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

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
