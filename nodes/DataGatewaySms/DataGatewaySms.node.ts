import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { readmeLink } from '../shared/n8n/readmeLink';
import { gatewayMethods, nodeSkeleton, resourceProperty } from '../shared/n8n/description';
import * as message from './actions/message';
import { router } from './actions/router';
import * as signature from './actions/signature';
import * as template from './actions/template';

export class DataGatewaySms implements INodeType {
	description: INodeTypeDescription = {
		...nodeSkeleton('action'),
		displayName: 'Data Gateway SMS',
		name: 'dataGatewaySms',
		icon: { light: 'file:dataGatewaySms.svg', dark: 'file:dataGatewaySms.dark.svg' },
		group: ['output'],
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		description:
			'Send SMS text messages (短信) such as verification codes and notifications through approved signatures and templates, check delivery, and manage signatures and templates',
		defaults: { name: 'Data Gateway SMS' },
		usableAsTool: true,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: [
			resourceProperty([
				{ name: 'Message', value: 'message' },
				{ name: 'Signature', value: 'signature' },
				{ name: 'Template', value: 'template' },
			]),
			{
				displayName: `Each item is texted at most once: Retry On Fail and retried executions do not send it twice. ${readmeLink('at-most-once-and-how-long-each-memory-lives', 'How')}`,
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
