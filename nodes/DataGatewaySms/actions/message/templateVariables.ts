import { NodeOperationError, type IExecuteFunctions, type ILoadOptionsFunctions, type INodeProperties, type ResourceMapperFields } from 'n8n-workflow';

import { checkTemplateContent, templateVariableNames } from '../../../shared/checks/sms';
import { asNodeError, GatewayFailure, inputError } from '../../../shared/errors/failures';
import { MAX_TEMPLATE_VARIABLES, MAX_VARIABLE_VALUE_LENGTH, REVIEW_STATUS_LABELS } from '../../../shared/gateway/catalog';
import { templateSchema, type Template } from '../../../shared/gateway/schemas/sms';
import { sightingOf } from '../../../shared/store/reviewedCatalogue';
import { noteSightings, saysNotFound } from '../catalogue/access';
import { noteVariableValues, valuesLeftAside } from './variableValues';
import { idValue } from '../catalogue/pickByName';
import { CREDENTIAL_TYPE } from '../../../shared/gateway/account';
import { GatewayClient } from '../../../shared/transport/gatewayClient';
import { settingsFromCredentials } from '../../../shared/transport/settings';

/** The name of the resource-mapping method that lists a template's variables. */
export const TEMPLATE_VARIABLES_METHOD = 'templateVariables';

/**
 * "Template Variables: From the Template": one field per `${name}` of the chosen template, read
 * with the free template query (Template → Get) when the form opens or the Template ID changes.
 */
export function templateVariablesField(show: Record<string, string[]>): INodeProperties {
	return {
		displayName: 'Variables',
		name: 'templateVariables',
		type: 'resourceMapper',
		noDataExpression: true,
		default: { mappingMode: 'defineBelow', value: null },
		required: true,
		description: `One value per variable of the template (at most ${MAX_VARIABLE_VALUE_LENGTH} characters each)`,
		typeOptions: {
			// From 1.4 the Template is a picker, whose ID is its `value`.
			loadOptionsDependsOn: ['templateId', 'templateId.value'],
			resourceMapper: {
				resourceMapperMethod: TEMPLATE_VARIABLES_METHOD,
				mode: 'add',
				fieldWords: { singular: 'variable', plural: 'variables' },
				addAllFields: true,
				multiKeyMatch: false,
				supportAutoMap: false,
				noFieldsError: 'This template has no variables: nothing to fill in',
			},
		},
		displayOptions: { show: { ...show, variablesInput: ['template'] } },
	};
}

/**
 * Shown for a template given as an expression (a new node's form shows nothing there: the Template
 * field is flagged as required). n8n reloads this form when the template changes only
 * if it can work out every expression of the node (seen in n8n 2.41: a Phone Number of
 * {{ $json.phone }} before the previous nodes ran keeps this text), so it says how to reload.
 */
export const CHOOSE_FIRST = 'Pick a template above: its variables appear here. Still this text? Click Execute previous nodes, or reopen this node.';

/** The gateway's words about a template it would not give: "not found" when it says so, else quoted. */
function unreadNotice(templateId: number, failure: GatewayFailure): string {
	const said = `the gateway says "${failure.message}"`;
	if (saysNotFound(failure)) return `Template ${templateId} not found (${said}). Check the ID, or pick the template from the list.`;
	return `Template ${templateId} could not be read: ${said}.`;
}

/** How the form names a template: its ID and name. */
const named = (templateId: number, template: Template) => `Template ${templateId}${template.name ? ` "${template.name}"` : ''}`;

/**
 * The template's variables as form fields, read with the free template query (and written into the
 * catalogue). A template that does not exist, is not approved or breaks the gateway's rules says
 * so here already, with its text.
 */
export async function templateVariableFields(this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
	// Values typed before a template change, given back to fields of the same name (variableValues.ts).
	const keptValues = noteVariableValues(this);
	const raw = String(idValue(this.getCurrentNodeParameter('templateId')) ?? '').trim();
	const templateId = Number(raw);
	if (raw.startsWith('=') || !Number.isInteger(templateId) || templateId <= 0) {
		// A template given as an expression is told to pick a fixed one; otherwise the area stays empty
		// (the Template field is flagged, and the Template Variables field's hint says what to do).
		return { fields: [], emptyFieldsNotice: raw.startsWith('=') ? CHOOSE_FIRST : '' };
	}
	const client = new GatewayClient(settingsFromCredentials(await this.getCredentials(CREDENTIAL_TYPE)));
	let template: Template;
	try {
		template = (await client.call('templateGet', { id: String(templateId) }, templateSchema)).data;
	} catch (error) {
		if (error instanceof GatewayFailure && error.kind === 'gateway-code') return { fields: [], emptyFieldsNotice: unreadNotice(templateId, error) };
		throw asNodeError(this.getNode(), error, 0);
	}
	await noteSightings(this, 'template', [{ ...sightingOf(template, 'form'), deleted: false }], client.accountKey);
	const content = template.content ?? '';
	if (template.status === 0 || template.status === 2) {
		const reason = template.status === 2 && template.error ? ` (the gateway says "${template.error}")` : '';
		return {
			fields: [],
			emptyFieldsNotice: `${named(templateId, template)} is ${REVIEW_STATUS_LABELS[String(template.status)]}${reason}: it can be sent once approved. It reads: ${content}`,
		};
	}
	const problem = checkTemplateContent(content);
	if (problem && problem !== 'is empty') {
		throw new NodeOperationError(this.getNode(), `Template ${templateId} ${problem}`, {
			description: `The gateway allows variables of letters and underscore, at most ${MAX_TEMPLATE_VARIABLES}. The template reads: ${content}`,
		});
	}
	const names = [...new Set(templateVariableNames(content))];
	return {
		fields: names.map((name) => ({ id: name, displayName: name, required: true, defaultMatch: false, canBeUsedToMatch: false, display: true, type: 'string', defaultValue: keptValues[name] ?? null })),
		emptyFieldsNotice: `${named(templateId, template)} has no variables: nothing to fill in. It reads: ${content}${valuesLeftAside(keptValues, names)}`,
	};
}

/**
 * The values given in "From the Template", as text (the gateway takes text). Every variable the
 * form listed when the template was read needs a value.
 */
export function readTemplateVariables(ctx: IExecuteFunctions, itemIndex: number): Record<string, string> {
	const mapping = ctx.getNodeParameter('templateVariables', itemIndex, {}) as { value?: Record<string, unknown> | null; schema?: Array<{ id: string; removed?: boolean }> };
	const fail = (problem: string, fix: string) => inputError(ctx.getNode(), itemIndex, 'Variables', problem, fix);
	const variables: Record<string, string> = {};
	for (const [name, value] of Object.entries(mapping.value ?? {})) {
		if (value !== null && typeof value === 'object') throw fail(`"${name}" is not a text or number value`, 'Give each variable a text, e.g. {{ $json.code }}.');
		if (value !== undefined && value !== null && value !== '') variables[name] = String(value);
	}
	const missing = (mapping.schema ?? []).filter((field) => !field.removed && !(field.id in variables)).map((field) => field.id);
	if (missing.length > 0) throw fail(`has no value for ${missing.map((name) => `\${${name}}`).join(', ')}, which the template uses`, 'Fill in every variable the form lists.');
	return variables;
}

/** Shown before version 1.2, and from 1.2 on, where "From the Template" is the default. */
const BEFORE_1_2 = { '@version': [{ _cnd: { lt: 1.2 } }] };
const FROM_1_2 = { '@version': [{ _cnd: { gte: 1.2 } }] };

/**
 * How the variables are given. Version 1.2 opens on "From the Template"; saved nodes (1, 1.1) keep
 * Key-Value Pairs as their default, since n8n does not save a parameter left at its default.
 */
export function variablesInputFields(show: Record<string, string[]>): INodeProperties[] {
	const field: INodeProperties = {
		displayName: 'Template Variables',
		name: 'variablesInput',
		type: 'options',
		options: [
			{ name: 'From the Template', value: 'template', description: "The template's variables, read from the gateway (free), each with its own field" },
			{ name: 'JSON', value: 'json' },
			{ name: 'Key-Value Pairs', value: 'keyValue' },
			{ name: 'None', value: 'none', description: 'The template has no variables' },
		],
		default: 'keyValue',
		description: 'How to give the values of the template\'s ${name} placeholders. With none, no params are sent.',
	};
	return [
		{ ...field, displayOptions: { show: { ...show, ...BEFORE_1_2 } } },
		// A hint, not a notice: n8n may not reload the variables after a pick when it cannot work out an expression of the node.
		{ ...field, default: 'template', hint: 'Variables appear below once a template is picked; if not, click Execute previous nodes', displayOptions: { show: { ...show, ...FROM_1_2 } } },
	];
}
