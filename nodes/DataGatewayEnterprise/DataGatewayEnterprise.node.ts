import type { INodeType, INodeTypeDescription } from 'n8n-workflow';

import { executeByRouter, gatewayMethods, OPERATION_SUBTITLE, NODE_VERSIONS_TO_1_4, nodeSkeleton, resourceProperty } from '../shared/n8n/description';
import * as copyright from './actions/copyright';
import * as registration from './actions/registration';
import { router } from './actions/router';
import { PRICES_YUAN } from '../shared/gateway/catalog';
import { priceNotice } from '../shared/n8n/priceNotice';
import { readmeUrl } from '../shared/n8n/readmeLink';

export class DataGatewayEnterprise implements INodeType {
	description: INodeTypeDescription = {
		// 1.2: one cost column on copyright records; 1.3: failed items on the error output keep the item's input; 1.4: each copyright page's cost once, on its first record, and error-branch items say the error in `message` and the fix in `details`.
		...nodeSkeleton('action', NODE_VERSIONS_TO_1_4),
		displayName: 'Data Gateway Enterprise',
		name: 'dataGatewayEnterprise',
		icon: { light: 'file:dataGatewayEnterprise.svg', dark: 'file:dataGatewayEnterprise.dark.svg' },
		group: ['transform'],
		subtitle: OPERATION_SUBTITLE,
		documentationUrl: readmeUrl('data-gateway-enterprise'),
		description: 'Look up company registration details and software copyright registrations',
		defaults: { name: 'Data Gateway Enterprise' },
		usableAsTool: true,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: [
			resourceProperty([
				{ name: 'Registration', value: 'registration' },
				{ name: 'Copyright', value: 'copyright' },
			]),
			priceNotice(`Get Registration ${PRICES_YUAN.enterpriseDetail} yuan per company found; copyrights ${PRICES_YUAN.enterpriseCopyright} yuan per page`, 'data-gateway-enterprise'),
			...registration.description,
			...copyright.description,
		],
	};

	methods = gatewayMethods;

	execute = executeByRouter(router);
}
