import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as deleteSignature from './delete.operation';
import * as get from './get.operation';
import * as update from './update.operation';

export { create, deleteSignature as delete, get, update };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['signature'] } },
		options: [
			{ name: 'Create', value: 'create', description: 'Submit a new signature for review', action: 'Create a signature' },
			{ name: 'Delete', value: 'delete', description: 'Delete an approved or rejected signature (one under review may be refused)', action: 'Delete a signature' },
			{ name: 'Get', value: 'get', description: 'Get a signature with its review status', action: 'Get a signature' },
			{ name: 'Update', value: 'update', description: 'Modify a rejected signature and resubmit it for review', action: 'Update a signature' },
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...update.description,
	...deleteSignature.description,
];
