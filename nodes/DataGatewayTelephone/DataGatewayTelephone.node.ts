import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { gatewayMethods, mainConnection } from '../shared/description';
import * as identify from './actions/identify.operation';

export class DataGatewayTelephone implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Data Gateway Telephone',
		name: 'dataGatewayTelephone',
		icon: { light: 'file:dataGatewayTelephone.svg', dark: 'file:dataGatewayTelephone.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: 'Identify Number',
		description:
			'Identify a mobile or landline number: its region, carrier, and whether users reported it as fraud, marketing or advertising',
		defaults: { name: 'Data Gateway Telephone' },
		usableAsTool: true,
		inputs: mainConnection,
		outputs: mainConnection,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: identify.description,
	};

	methods = gatewayMethods;

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [await identify.execute.call(this)];
	}
}
