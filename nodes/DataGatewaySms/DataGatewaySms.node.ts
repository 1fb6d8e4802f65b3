import type { INodeType, INodeTypeDescription } from 'n8n-workflow';

import { readmeLink, readmeUrl } from '../shared/n8n/readmeLink';
import { executeByRouter, gatewayMethods, OPERATION_SUBTITLE, NODE_VERSIONS_TO_1_5, nodeSkeleton, resourceProperty } from '../shared/n8n/description';
import * as message from './actions/message';
import * as optOut from './actions/optOut';
import { TEMPLATE_VARIABLES_METHOD, templateVariableFields } from './actions/message/templateVariables';
import { router } from './actions/router';
import { searchSignatures, searchTemplates, SEARCH_METHODS } from './actions/catalogue/pickByName';
import { PRICES_YUAN } from '../shared/gateway/catalog';
import { priceNotice } from '../shared/n8n/priceNotice';
import * as signature from './actions/signature';
import * as template from './actions/template';
import * as usage from './actions/usage';

export class DataGatewaySms implements INodeType {
	description: INodeTypeDescription = {
		// 1.2: Template Variables opens on "From the Template"; 1.3: failed items on the error output keep the item's input; 1.4: Check Pending Deliveries writes its dates in China time, Signature and Template are picked by name, error-branch items say the error in `message` and the fix in `details`; 1.5: see NODE_VERSIONS_TO_1_5. Saved nodes keep their form.
		...nodeSkeleton('action', NODE_VERSIONS_TO_1_5),
		displayName: 'Data Gateway SMS',
		name: 'dataGatewaySms',
		icon: { light: 'file:dataGatewaySms.svg', dark: 'file:dataGatewaySms.dark.svg' },
		group: ['output'],
		subtitle: OPERATION_SUBTITLE,
		documentationUrl: readmeUrl('data-gateway-sms'),
		description:
			'Send SMS text messages (短信) such as verification codes and notifications through approved signatures and templates, check delivery, manage signatures and templates, and keep an opt-out list of numbers never to text',
		defaults: { name: 'Data Gateway SMS' },
		usableAsTool: true,
		credentials: [{ name: 'dataGatewayApi', required: true, testedBy: 'dataGatewayApiTest' }],
		properties: [
			resourceProperty([
				{ name: 'Message', value: 'message' },
				{ name: 'Opt-Out', value: 'optOut' },
				{ name: 'Signature', value: 'signature' },
				{ name: 'Template', value: 'template' },
				{ name: 'Usage', value: 'usage' },
			]),
			priceNotice(
				// One line at 1440 x 900: the form's only notice by default (segments and the Repeat Window: Options and docs).
				`Send ${PRICES_YUAN.smsSegment} yuan per segment, all else free`,
				'data-gateway-sms',
			),
			{
				// Only in the AI Agent tool variant (n8n's '@tool'), where a model may repeat a call.
				displayName: `Each AI tool call is its own run: per-number limits stop repeats, not the Repeat Window. On n8n 1.x, set On Error to Continue so the model reads refusals. ${readmeLink('as-a-tool-of-n8ns-ai-agent', 'More')}`,
				name: 'agentToolNotice',
				type: 'notice',
				default: '',
				displayOptions: { show: { resource: ['message'], operation: ['send', 'sendAndCheck'], '@tool': [true] } },
			},
			...message.description,
			...optOut.description,
			...signature.description,
			...template.description,
			...usage.description,
		],
	};

	methods = {
		...gatewayMethods,
		resourceMapping: { [TEMPLATE_VARIABLES_METHOD]: templateVariableFields },
		listSearch: { [SEARCH_METHODS.signature]: searchSignatures, [SEARCH_METHODS.template]: searchTemplates },
	};

	execute = executeByRouter(router);
}
