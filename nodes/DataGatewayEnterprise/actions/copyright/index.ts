import type { INodeProperties } from 'n8n-workflow';

import * as getAll from './getAll.operation';

export { getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['copyright'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List the software copyright registrations of a company (paid per page)',
				action: 'Get many copyright registrations',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];
