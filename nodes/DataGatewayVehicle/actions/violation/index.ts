import type { INodeProperties } from 'n8n-workflow';

import * as getSupportRules from './getSupportRules.operation';
import * as query from './query.operation';

export { getSupportRules, query };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['violation'] } },
		options: [
			{
				name: 'Query',
				value: 'query',
				description: 'Look up traffic violations of a vehicle by plate number (paid)',
				action: 'Query violations of a vehicle',
			},
			{
				name: 'Get Support Rules',
				value: 'getSupportRules',
				description: 'Which regions are covered and which engine and frame number tails they need (free)',
				action: 'Get violation support rules',
			},
		],
		default: 'query',
	},
	...getSupportRules.description,
	...query.description,
];
