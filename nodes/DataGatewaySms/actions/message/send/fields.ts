import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

import { forVersion } from '../../../../shared/n8n/description';
import { templateVariablesField, variablesInputFields } from '../templateVariables';
import { refuseContentWarningsOption } from '../../../../shared/checks/contentOption';
import { sendWindowOption, sendWindowOptionBefore1_5, WINDOW_CHOICE_VERSION } from '../../../../shared/checks/sendWindow';
import type { SmsLimits } from '../../../../shared/store/sendRecords/rules';
import { DEFAULT_SMS_LIMITS, MAX_TEMPLATE_VARIABLES, MAX_VARIABLE_VALUE_LENGTH } from '../../../../shared/gateway/catalog';
import { readmeLink } from '../../../../shared/n8n/readmeLink';
import { pickerField } from '../../catalogue/pickByName';
import { referenceOption } from '../reference';
import { phoneNumberField } from '../../phoneField';

const ID_HINT = 'Find it in the gateway console, or with Signature → Get';

/**
 * An approved signature's or template's ID: a number field in version 1, text in 1.1 to 1.3 so a
 * new node flags it as missing, and from 1.4 a picker by name (catalogue/pickByName.ts) with By ID.
 */
function idFields(name: string, displayName: string, noun: 'signature' | 'template', show: NonNullable<IDisplayOptions['show']>): INodeProperties[] {
	const description = `ID of an approved ${noun} (see the ${displayName.replace(' ID', '')} resource)`;
	return [
		{ displayName, name, type: 'number', required: true, default: 0, description, displayOptions: forVersion(1, { show }) },
		{
			displayName,
			name,
			type: 'string',
			required: true,
			default: '',
			placeholder: noun === 'signature' ? 'e.g. 12, an approved signature' : 'e.g. 34, an approved template',
			description,
			hint: noun === 'signature' ? ID_HINT : ID_HINT.replace('Signature → Get', 'Template → Get'),
			displayOptions: { show: { ...show, '@version': [1.1, 1.2, 1.3] } },
		},
		pickerField(name, noun, show),
	];
}

/** A per-number limit of the Options: messages this node sends to one number in one calendar window. */
function limitField(name: keyof SmsLimits, displayName: string, window: string): INodeProperties {
	// A plain name: n8n's linter reads only a literal or a name as a default, not an index.
	const limit = DEFAULT_SMS_LIMITS[name];
	return {
		displayName,
		name,
		type: 'number',
		typeOptions: { minValue: 1 },
		default: limit,
		description: `Messages this node sends to one number ${window}, counted across executions; the gateway default is ${limit}`,
	};
}

const more = (anchor: string) => readmeLink(anchor, 'More');

/** Limits: the per-number counts, in the order of their windows. */
const LIMIT_OPTIONS: INodeProperties[] = [
	limitField('perMinute', 'Limit: Max per Number per Minute', 'in one calendar minute'),
	limitField('perHour', 'Limit: Max per Number per Hour', 'in one calendar hour'),
	limitField('perDay', 'Limit: Max per Number per Day', 'in one calendar day, China time (UTC+8)'),
];

/** Window: the hours of the day to send in. */
const WINDOW_OPTIONS: INodeProperties[] = [
	{ ...sendWindowOption, displayName: 'Window: Send Window', displayOptions: { show: { '@version': [{ _cnd: { gte: WINDOW_CHOICE_VERSION } }] } } },
	{ ...sendWindowOptionBefore1_5, displayName: 'Window: Send Window' },
];

/** Content: what is read or given to check the message before it is paid for. */
const CONTENT_OPTIONS: INodeProperties[] = [
	{
		displayName: 'Content: Read Template and Signature',
		name: 'readTemplate',
		type: 'boolean',
		default: false,
		description: 'Whether to read the template and signature first (free, once per execution): an unapproved one or wrong variables stop the item before paying; the output adds length and cost',
	},
	{ ...refuseContentWarningsOption, displayName: 'Content: Refuse Content Warnings', description: `${refuseContentWarningsOption.description} ${more('content-checks')}` },
	{
		displayName: 'Content: Signature Text',
		name: 'signatureText',
		type: 'string',
		default: '',
		description: 'The signature without 【】, to count the message length without reading it (ignored when Read Template and Signature is on)',
	},
	{
		displayName: 'Content: Template Content',
		name: 'templateContent',
		type: 'string',
		default: '',
		description: 'The template text with its ${name} placeholders, to check the variables and count the length without reading it (ignored when Read Template and Signature is on)',
	},
];

/** Records: what the send records remember across executions. */
const RECORDS_OPTIONS: INodeProperties[] = [
	{
		displayName: 'Records: Repeat Window (Minutes)',
		name: 'repeatWindowMinutes',
		type: 'number',
		typeOptions: { minValue: 0 },
		default: 10,
		description: `Another execution of this node does not resend the same message (number, signature, template, variables) within this many minutes, so a retried execution texts no one twice. 0: off. ${more('at-most-once-and-how-long-each-memory-lives')}`,
	},
	referenceOption,
];

/** The fields of Send, shared by Send and Send and Check Delivery. */
export function sendFields(operations: string[]): INodeProperties[] {
	const show = { resource: ['message'], operation: operations };
	return [
		...idFields('signId', 'Signature ID', 'signature', show),
		...idFields('templateId', 'Template ID', 'template', show),
		phoneNumberField('A mainland mobile number. Spaces, dashes and a +86 prefix are removed.', show),
		...variablesInputFields(show),
		templateVariablesField(show),
		{
			displayName: 'Variables',
			name: 'variables',
			type: 'fixedCollection',
			typeOptions: { multipleValues: true },
			placeholder: 'Add Variable',
			default: {},
			description: `Values for the template's \${name} placeholders (at most ${MAX_TEMPLATE_VARIABLES}, each up to ${MAX_VARIABLE_VALUE_LENGTH} characters)`,
			displayOptions: { show: { ...show, variablesInput: ['keyValue'] } },
			options: [
				{
					name: 'variable',
					displayName: 'Variable',
					values: [
						{
							displayName: 'Name',
							name: 'name',
							type: 'string',
							default: '',
							placeholder: 'e.g. code',
							description: 'The placeholder name without ${ }: letters and underscore only',
						},
						{ displayName: 'Value', name: 'value', type: 'string', default: '', description: 'The text to put in its place' },
					],
				},
			],
		},
		{
			displayName: 'Variables (JSON)',
			name: 'variablesJson',
			type: 'json',
			default: '{}',
			description: 'A JSON object of variable names and values, e.g. {"code": "1234"}',
			displayOptions: { show: { ...show, variablesInput: ['json'] } },
		},
		{
			displayName: 'Options',
			name: 'sendOptions',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show },
			// Grouped by purpose, each group's name first; n8n lists them in this order (a built list, not a literal the linter sorts).
			options: [...LIMIT_OPTIONS, ...WINDOW_OPTIONS, ...CONTENT_OPTIONS, ...RECORDS_OPTIONS],
		},
	];
}
