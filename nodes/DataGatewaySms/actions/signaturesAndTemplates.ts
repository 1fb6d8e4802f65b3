import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { checkKeyword } from '../../shared/checks/keyword';
import { checkSignatureName } from '../../shared/checks/sms';
import { signatureSchema, templateSchema } from '../../shared/gateway/schemas/sms';
import { runChanges, type ReviewedKind, type ReviewedOperation } from './changeRun';

export type { ReviewedKind, ReviewedOperation };

/**
 * Signatures and templates share one lifecycle (docs/gateway-api.md#states): created under review,
 * approved or rejected, modifiable only when rejected, deletable when approved or rejected. One
 * implementation serves both: this file their forms, changeRun.ts their runs.
 */

export const SIGNATURE: ReviewedKind = {
	resource: 'signature',
	label: 'Signature',
	operations: { create: 'signatureCreate', get: 'signatureGet', update: 'signatureUpdate', delete: 'signatureDelete' },
	schema: signatureSchema,
	hasContent: false,
	checkName: checkSignatureName,
	nameHint: 'Use only Chinese characters, letters and digits, e.g. your brand name; no brackets, test wording or over-broad names.',
};

export const TEMPLATE: ReviewedKind = {
	resource: 'template',
	label: 'Template',
	operations: { create: 'templateCreate', get: 'templateGet', update: 'templateUpdate', delete: 'templateDelete' },
	schema: templateSchema,
	hasContent: true,
	checkName: (name) => (checkKeyword(name).ok ? undefined : 'is empty'),
	nameHint: 'Give the template a name.',
};

function fields(kind: ReviewedKind, operation: ReviewedOperation): INodeProperties[] {
	const show = { resource: [kind.resource], operation: [operation] };
	const noun = kind.label.toLowerCase();
	const id: INodeProperties = {
		displayName: `${kind.label} ID`,
		name: 'id',
		type: 'number',
		required: true,
		default: 0,
		description: `The numeric ID of the ${noun}`,
		displayOptions: { show },
	};
	const name: INodeProperties = {
		displayName: kind.resource === 'signature' ? 'Signature Text' : 'Name',
		name: 'name',
		type: 'string',
		required: true,
		default: '',
		description:
			kind.resource === 'signature'
				? 'The signature shown in brackets before every message, e.g. your brand. Chinese characters, letters and digits only.'
				: 'A name for the template',
		displayOptions: { show },
	};
	const remark: INodeProperties = {
		displayName: 'Description',
		name: 'remark',
		type: 'string',
		required: true,
		default: '',
		description: 'The usage scenario (and your website), which the reviewers read',
		displayOptions: { show },
	};
	const content: INodeProperties = {
		displayName: 'Content',
		name: 'content',
		type: 'string',
		typeOptions: { rows: 3 },
		required: operation === 'create',
		default: '',
		placeholder: '您的验证码是${code}，5分钟内有效。',
		description:
			operation === 'create'
				? 'Message text with variables written as ${name} (letters and underscore only, at most 8); no signature brackets'
				: 'New message text; leave empty to keep the current one',
		displayOptions: { show },
	};
	switch (operation) {
		case 'create':
			return kind.hasContent ? [name, content, remark] : [name, remark];
		case 'update':
			return kind.hasContent ? [id, name, content, remark] : [id, name, remark];
		default:
			return [id];
	}
}

/** The Operation dropdown of a reviewed resource. */
export function reviewedOperationProperty(kind: ReviewedKind): INodeProperties {
	const noun = kind.label.toLowerCase();
	return {
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: [kind.resource] } },
		options: [
			{ name: 'Create', value: 'create', description: `Submit a new ${noun} for review`, action: `Create a ${noun}` },
			{ name: 'Delete', value: 'delete', description: `Delete an approved or rejected ${noun} (one under review may be refused)`, action: `Delete a ${noun}` },
			{ name: 'Get', value: 'get', description: `Get a ${noun} with its review status`, action: `Get a ${noun}` },
			{
				name: 'Import to Catalogue',
				value: 'import',
				description: `Read ${noun}s by ID (free) so that Send lists them by name, e.g. ones made on the gateway's site`,
				action: `Import ${noun}s to the catalogue`,
			},
			{ name: 'Update', value: 'update', description: `Modify a rejected ${noun} and resubmit it for review`, action: `Update a ${noun}` },
		],
		default: 'create',
	};
}

/** The operation of one kind: its fields, and its execute (changeRun.ts). */
export function reviewedOperation(kind: ReviewedKind, operation: ReviewedOperation) {
	const description = fields(kind, operation);
	async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
		return await runChanges(this, kind, operation);
	}
	return { description, execute };
}
