import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as deleteTemplate from './delete.operation';
import * as get from './get.operation';
import * as update from './update.operation';

export { create, deleteTemplate as delete, get, update };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['template'] } },
		options: [
			{ name: 'Create', value: 'create', description: 'Submit a new template for review', action: 'Create a template' },
			{ name: 'Delete', value: 'delete', description: 'Delete an approved or rejected template (one under review may be refused)', action: 'Delete a template' },
			{ name: 'Get', value: 'get', description: 'Get a template with its review status', action: 'Get a template' },
			{ name: 'Update', value: 'update', description: 'Modify a rejected template and resubmit it for review', action: 'Update a template' },
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...update.description,
	...deleteTemplate.description,
];
