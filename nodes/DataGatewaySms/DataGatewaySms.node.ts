import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { gatewayMethods, mainConnection } from '../shared/description';
import * as message from './actions/message';
import { router } from './actions/router';
import * as signature from './actions/signature';
import * as template from './actions/template';

export class DataGatewaySms implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Data Gateway SMS',
		name: 'dataGatewaySms',
		icon: { light: 'file:dataGatewaySms.svg', dark: 'file:dataGatewaySms.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		description: 'Send SMS through approved signatures and templates, check delivery, and manage signatures and templates',
		defaults: { name: 'Data Gateway SMS' },
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
					{ name: 'Message', value: 'message' },
					{ name: 'Signature', value: 'signature' },
					{ name: 'Template', value: 'template' },
				],
				default: 'message',
			},
			{
				displayName:
					'Each send is made at most once per item and execution, even when Retry On Fail re-runs this node. A send whose outcome is unknown is reported, never repeated.',
				name: 'atMostOnceNotice',
				type: 'notice',
				default: '',
				displayOptions: { show: { resource: ['message'], operation: ['send', 'sendAndWait'] } },
			},
			...message.description,
			...signature.description,
			...template.description,
		],
	};

	methods = gatewayMethods;

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
