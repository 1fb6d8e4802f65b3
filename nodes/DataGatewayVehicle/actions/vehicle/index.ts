import type { INodeProperties } from 'n8n-workflow';

import * as getDetail from './getDetail.operation';

export { getDetail };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['vehicle'] } },
		options: [
			{
				name: 'Get Detail',
				value: 'getDetail',
				description: 'Registration details of a vehicle by plate number and type (paid)',
				action: 'Get vehicle detail',
			},
		],
		default: 'getDetail',
	},
	...getDetail.description,
];
