import type {
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { NODE_VERSIONS_TO_1_2, nodeSkeleton } from '../shared/n8n/description';
import { readmeUrl } from '../shared/n8n/readmeLink';
import { triggerProperties } from './description';
import { checkPathToken, WEBHOOK_PATH } from './callbackUrl';
import { receiveCallback, STARTED_ANSWER } from './webhook';

export class DataGatewaySmsTrigger implements INodeType {
	description: INodeTypeDescription = {
		// 1.2: the URL Token in the URL path (the URLs n8n shows are complete), dates in China time.
		...nodeSkeleton('trigger', NODE_VERSIONS_TO_1_2),
		displayName: 'Data Gateway SMS Trigger',
		name: 'dataGatewaySmsTrigger',
		icon: { light: 'file:dataGatewaySmsTrigger.svg', dark: 'file:dataGatewaySmsTrigger.dark.svg' },
		group: ['trigger'],
		subtitle: '={{ $parameter["events"].map((event) => ({ report: "delivery report", sign: "signature review", template: "template review" })[event] ?? event).join(", ") }}',
		// n8n lists this node and Data Gateway SMS as one entry in the node creator, with this text: sending comes first, and it names no single node.
		description: 'Send SMS text messages (短信) and start workflows on their delivery reports and on signature and template review results',
		documentationUrl: readmeUrl('data-gateway-sms-trigger'),
		defaults: { name: 'Data Gateway SMS Trigger' },
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: WEBHOOK_PATH,
				// The answer to a callback that started the workflow; n8n sends it after saving the static data.
				responseData: `={{ ${JSON.stringify(STARTED_ANSWER)} }}`,
			},
		],
		properties: triggerProperties,
	};

	/** The gateway has no API for its callback URL: the user pastes it in the console, so there is nothing to register. */
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				checkPathToken(this);
				return true;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				checkPathToken(this);
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await receiveCallback(this);
	}
}
