import type { INodeProperties } from 'n8n-workflow';

import * as checkPendingDeliveries from './checkPending.operation';
import * as getStatus from './getStatus.operation';
import * as preview from './preview.operation';
import * as send from './send.operation';
import * as sendAndCheck from './sendAndCheck.operation';

export { checkPendingDeliveries, getStatus, preview, send, sendAndCheck };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['message'] } },
		// n8n's linter wants five or more options alphabetical, so Send no longer leads the node creator's list.
		options: [
			{
				name: 'Check Pending Deliveries',
				value: 'checkPendingDeliveries',
				description: 'Find sent messages whose delivery report never reached an SMS Trigger and output the final ones (free queries)',
				action: 'Check pending deliveries',
			},
			{
				name: 'Get Status',
				value: 'getStatus',
				description: 'Get the delivery status of a sent message by its task ID',
				action: 'Get the status of a message',
			},
			{
				name: 'Preview',
				value: 'preview',
				description: 'Show each item\'s exact message, its length, segments and cost, and send nothing (free)',
				action: 'Preview an SMS without sending',
			},
			{
				name: 'Send',
				value: 'send',
				description: 'Send an SMS with an approved signature and template (paid per delivered message)',
				action: 'Send an SMS',
			},
			{
				name: 'Send and Check Delivery',
				value: 'sendAndCheck',
				description: 'Send an SMS, then check its status until it is delivered, failed, or the wait times out',
				action: 'Send an SMS and check delivery',
			},
		],
		default: 'send',
	},
	...send.description,
	...sendAndCheck.description,
	...getStatus.description,
	...checkPendingDeliveries.description,
	...preview.description,
];
