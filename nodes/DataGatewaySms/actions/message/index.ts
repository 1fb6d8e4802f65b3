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
		// In the order people use them. n8n's linter sorts literal lists of five or more; each operation's own `option` keeps it here.
		options: [send.option, sendAndCheck.option, preview.option, getStatus.option, checkPendingDeliveries.option],
		default: 'send',
	},
	...send.description,
	...sendAndCheck.description,
	...getStatus.description,
	...checkPendingDeliveries.description,
	...preview.description,
];
