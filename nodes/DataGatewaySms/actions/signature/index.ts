import type { INodeProperties } from 'n8n-workflow';

import { reviewedOperationProperty, SIGNATURE } from '../signaturesAndTemplates';
import * as create from './create.operation';
import * as deleteSignature from './delete.operation';
import * as get from './get.operation';
import * as importToCatalogue from './import.operation';
import * as update from './update.operation';

export const description: INodeProperties[] = [
	reviewedOperationProperty(SIGNATURE),
	...create.description,
	...get.description,
	...importToCatalogue.description,
	...update.description,
	...deleteSignature.description,
];
