import type { INodeProperties } from 'n8n-workflow';

import * as getStatus from './getStatus.operation';
import * as preview from './preview.operation';
import * as send from './send.operation';
import * as sendAndCheck from './sendAndCheck.operation';

export { getStatus, preview, send, sendAndCheck };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['message'] } },
		// In the order people use them (the node creator lists them so): send first, then follow up.
		options: [
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
		],
		default: 'send',
	},
	...send.description,
	...sendAndCheck.description,
	...getStatus.description,
	...preview.description,
];
