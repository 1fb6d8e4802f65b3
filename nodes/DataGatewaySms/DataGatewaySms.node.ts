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
					"At most once: each item is sent once per run of this node (Retry On Fail does not send it again; a loop's next run sends again). Another execution of this node (a retried execution, a double-submitted form) skips the same message within the Repeat Window, and the per-number limits count this node's sends across executions, in n8n's database. A send whose outcome is unknown is reported, never repeated. Not covered: the same message from another node or workflow, after the window, or with other variables.",
				name: 'atMostOnceNotice',
				type: 'notice',
				default: '',
				displayOptions: { show: { resource: ['message'], operation: ['send', 'sendAndCheck'] } },
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
