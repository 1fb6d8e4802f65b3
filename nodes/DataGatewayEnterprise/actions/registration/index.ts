import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';

export { get };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['registration'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description:
					'Registration details of a company: legal representative, capital, status, shareholders, key personnel, changes (paid)',
				action: 'Get company registration details',
			},
		],
		default: 'get',
	},
	...get.description,
];
