import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { checkMobileNumber } from '../../../shared/checks/phone';
import { checkVariables, messageSize, renderTemplate, type MessageSize } from '../../../shared/checks/sms';
import type { callOptions } from '../../../shared/client';
import { asNodeError, GatewayFailure, inputError } from '../../../shared/errors';
import { executionScope } from '../../../shared/executionScope';
import { sendResultSchema, signatureSchema, templateSchema } from '../../../shared/schemas/sms';
import { sendCertainlyFailed, SmsSendGuard, type SmsLimits } from '../../../shared/smsGuard';
import { DEFAULT_SMS_LIMITS, MAX_TEMPLATE_VARIABLES } from '../../../shared/spec';
import type { GatewayClient } from '../../../shared/transport';

/** The fields of Send, shared by Send and Send and Wait. */
export function sendFields(operations: string[]): INodeProperties[] {
	const show = { resource: ['message'], operation: operations };
	return [
		{
			displayName: 'Signature ID',
			name: 'signId',
			type: 'number',
			required: true,
			default: 0,
			description: 'ID of an approved signature (see the Signature resource)',
			displayOptions: { show },
		},
		{
			displayName: 'Template ID',
			name: 'templateId',
			type: 'number',
			required: true,
			default: 0,
			description: 'ID of an approved template (see the Template resource)',
			displayOptions: { show },
		},
		{
			displayName: 'Phone Number',
			name: 'phone',
			type: 'string',
			required: true,
			default: '',
			placeholder: '13800138000',
			description: 'A mainland mobile number. Spaces, dashes and a +86 prefix are removed.',
			displayOptions: { show },
		},
		{
			displayName: 'Template Variables',
			name: 'variablesInput',
			type: 'options',
			options: [
				{ name: 'None', value: 'none', description: 'The template has no variables' },
				{ name: 'Key-Value Pairs', value: 'keyValue' },
				{ name: 'JSON', value: 'json' },
			],
			default: 'keyValue',
			displayOptions: { show },
		},
		{
			displayName: 'Variables',
			name: 'variables',
			type: 'fixedCollection',
			typeOptions: { multipleValues: true },
			placeholder: 'Add Variable',
			default: {},
			description: `Values for the template's \${name} placeholders (at most ${MAX_TEMPLATE_VARIABLES}, each up to 50 characters)`,
			displayOptions: { show: { ...show, variablesInput: ['keyValue'] } },
			options: [
				{
					name: 'variable',
					displayName: 'Variable',
					values: [
						{ displayName: 'Name', name: 'name', type: 'string', default: '', placeholder: 'code' },
						{ displayName: 'Value', name: 'value', type: 'string', default: '' },
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
			options: [
				{
					displayName: 'Count Segments From Gateway',
					name: 'readTemplate',
					type: 'boolean',
					default: false,
					description:
						'Whether to read the template and signature (free queries, once per execution) to output the message length, segments and estimated cost',
				},
				{
					displayName: 'Max per Number per Day',
					name: 'perDay',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: 10,
					description: 'Sends to one number within a day that this execution allows; the gateway default is 10',
				},
				{
					displayName: 'Max per Number per Hour',
					name: 'perHour',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: 5,
					description: 'Sends to one number within an hour that this execution allows; the gateway default is 5',
				},
				{
					displayName: 'Max per Number per Minute',
					name: 'perMinute',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: 1,
					description: 'Sends to one number within a minute that this execution allows; the gateway default is 1',
				},
				{
					displayName: 'Signature Text',
					name: 'signatureText',
					type: 'string',
					default: '',
					description: 'The text of the signature, to count the message length without reading it from the gateway',
				},
				{
					displayName: 'Template Content',
					name: 'templateContent',
					type: 'string',
					default: '',
					description: 'The text of the template, to count the message length without reading it from the gateway',
				},
			],
		},
	];
}

export interface SendPlan {
	itemIndex: number;
	key: string;
	phone: string;
	params: { signId: number; templateId: number; phone: string; params?: IDataObject };
	variables: Record<string, string>;
	readTemplate: boolean;
	signatureText?: string;
	templateContent?: string;
}

export interface SendOutcome extends Partial<MessageSize> {
	taskId: string;
	phone: string;
	signId: number;
	templateId: number;
	/** True when this item was already sent earlier in the execution (Retry On Fail) and was not sent again. */
	deduplicated: boolean;
}

function readVariables(ctx: IExecuteFunctions, itemIndex: number): Record<string, string> {
	const fail = (problem: string) =>
		inputError(ctx.getNode(), itemIndex, 'Variables', problem, 'Give an object of names and text values, e.g. {"code": "1234"}.');
	const input = ctx.getNodeParameter('variablesInput', itemIndex, 'keyValue') as string;
	if (input === 'none') return {};
	if (input === 'json') {
		let value = ctx.getNodeParameter('variablesJson', itemIndex, '{}') as unknown;
		if (typeof value === 'string') {
			try {
				value = value.trim() === '' ? {} : JSON.parse(value);
			} catch {
				throw fail('is not valid JSON');
			}
		}
		if (!value || typeof value !== 'object' || Array.isArray(value)) throw fail('is not a JSON object');
		return Object.fromEntries(
			Object.entries(value as IDataObject).map(([name, inner]) => {
				if (inner !== null && typeof inner === 'object') throw fail(`"${name}" is not a text or number value`);
				return [name, String(inner ?? '')];
			}),
		);
	}
	const pairs = (ctx.getNodeParameter('variables.variable', itemIndex, []) as Array<{ name?: string; value?: unknown }>) ?? [];
	const variables: Record<string, string> = {};
	for (const pair of pairs) {
		const name = String(pair.name ?? '').trim();
		if (name === '') throw fail('has a variable without a name');
		if (name in variables) throw fail(`has "${name}" twice`);
		variables[name] = String(pair.value ?? '');
	}
	return variables;
}

function readId(ctx: IExecuteFunctions, itemIndex: number, name: string, label: string): number {
	const value = Number(ctx.getNodeParameter(name, itemIndex, 0));
	if (!Number.isInteger(value) || value <= 0) {
		throw inputError(ctx.getNode(), itemIndex, label, `"${value}" is not a positive whole number`, `Enter the numeric ID of an approved ${label.replace(' ID', '').toLowerCase()}.`);
	}
	return value;
}

export function smsLimits(ctx: IExecuteFunctions): SmsLimits {
	const options = ctx.getNodeParameter('sendOptions', 0, {}) as IDataObject;
	return {
		perMinute: Number(options.perMinute ?? DEFAULT_SMS_LIMITS.perMinute),
		perHour: Number(options.perHour ?? DEFAULT_SMS_LIMITS.perHour),
		perDay: Number(options.perDay ?? DEFAULT_SMS_LIMITS.perDay),
	};
}

/**
 * Reads and checks one item's send. `plannedByPhone` counts the sends planned by earlier items of
 * this run, so that the per-number limits hold in item order before anything is sent.
 */
export function planSend(
	ctx: IExecuteFunctions,
	itemIndex: number,
	client: GatewayClient,
	guard: SmsSendGuard,
	plannedByPhone: Map<string, number>,
): SendPlan {
	const signId = readId(ctx, itemIndex, 'signId', 'Signature ID');
	const templateId = readId(ctx, itemIndex, 'templateId', 'Template ID');
	const phone = checkMobileNumber(ctx.getNodeParameter('phone', itemIndex, '') as string);
	if (!phone.ok) throw inputError(ctx.getNode(), itemIndex, 'Phone Number', phone.value, 'Enter a mainland mobile number like 13800138000.');
	const variables = readVariables(ctx, itemIndex);
	const problem = checkVariables(variables);
	if (problem) throw inputError(ctx.getNode(), itemIndex, 'Variables', problem, 'Fix the variable names and values to match the template.');

	// params is left out when there are no variables: the gateway refuses it for templates without any.
	const params = {
		signId,
		templateId,
		phone: phone.value,
		...(Object.keys(variables).length > 0 ? { params: variables as IDataObject } : {}),
	};
	const key = `${ctx.getNode().name}|${itemIndex}|${client.questionKey('smsSend', params)}`;
	if (!guard.previous(key)) {
		const planned = plannedByPhone.get(phone.value) ?? 0;
		const broken = guard.limitBrokenBy(phone.value, planned);
		if (broken) {
			throw inputError(ctx.getNode(), itemIndex, 'Phone Number', `not sent: this ${broken}`, 'Send fewer messages to this number, or raise the limits in Options if your account allows more.');
		}
		plannedByPhone.set(phone.value, planned + 1);
	}
	const options = ctx.getNodeParameter('sendOptions', itemIndex, {}) as IDataObject;
	return {
		itemIndex,
		key,
		phone: phone.value,
		params,
		variables,
		readTemplate: options.readTemplate === true,
		signatureText: (options.signatureText as string) || undefined,
		templateContent: (options.templateContent as string) || undefined,
	};
}

/** Signature and template text, from the options or from the gateway (free queries, asked once per execution). */
async function textsFor(
	ctx: IExecuteFunctions,
	client: GatewayClient,
	plan: SendPlan,
	options: ReturnType<typeof callOptions>,
): Promise<{ signature?: string; template?: string }> {
	let signature = plan.signatureText;
	let template = plan.templateContent;
	if (plan.readTemplate && (signature === undefined || template === undefined)) {
		const lookups = executionScope(ctx.getExecutionId?.() || 'unscoped').lookups;
		const ask = <T>(key: string, load: () => Promise<T>): Promise<T> => {
			let answer = lookups.get(key) as Promise<T> | undefined;
			if (!answer) {
				answer = load();
				lookups.set(key, answer);
				answer.catch(() => lookups.delete(key));
			}
			return answer;
		};
		const signatureParams = { id: String(plan.params.signId) };
		const templateParams = { id: String(plan.params.templateId) };
		signature ??= (await ask(client.questionKey('signatureGet', signatureParams), async () => (await client.call('signatureGet', signatureParams, signatureSchema, options)).data)).name ?? undefined;
		template ??= (await ask(client.questionKey('templateGet', templateParams), async () => (await client.call('templateGet', templateParams, templateSchema, options)).data)).content ?? undefined;
	}
	return { signature, template };
}

/** Sends once per item and execution; a re-run of the node hands back the earlier outcome. */
export async function sendOnce(
	ctx: IExecuteFunctions,
	client: GatewayClient,
	guard: SmsSendGuard,
	plan: SendPlan,
	options: ReturnType<typeof callOptions>,
): Promise<SendOutcome> {
	const base = { phone: plan.phone, signId: plan.params.signId, templateId: plan.params.templateId };
	const earlier = guard.previous(plan.key);
	let taskId: string;
	let deduplicated = false;
	if (earlier) {
		deduplicated = true;
		try {
			taskId = (await earlier.outcome) as string;
		} catch (error) {
			const unknown = error instanceof GatewayFailure && error.kind === 'outcome-unknown';
			throw asNodeError(
				ctx.getNode(),
				unknown
					? new GatewayFailure({
							kind: 'outcome-unknown',
							operation: 'smsSend',
							message: `not sent again: an earlier attempt in this execution may have reached the gateway (${error.message})`,
							hint: UNKNOWN_OUTCOME_HINT,
						})
					: error,
				plan.itemIndex,
			);
		}
	} else {
		try {
			taskId = await guard.track(plan.key, plan.phone, async () => (await client.call('smsSend', plan.params, sendResultSchema, options)).data.id);
		} catch (error) {
			const uncertain = error instanceof GatewayFailure && !sendCertainlyFailed(error);
			throw asNodeError(
				ctx.getNode(),
				uncertain
					? new GatewayFailure({
							kind: error.kind,
							operation: 'smsSend',
							message: `${error.message}; the message may or may not have been sent`,
							httpStatus: error.httpStatus,
							hint: UNKNOWN_OUTCOME_HINT,
						})
					: error,
				plan.itemIndex,
			);
		}
	}

	const outcome: SendOutcome = { taskId, ...base, deduplicated };
	const texts = await textsFor(ctx, client, plan, options).catch(() => ({}) as { signature?: string; template?: string });
	if (texts.signature !== undefined && texts.template !== undefined) {
		Object.assign(outcome, messageSize(texts.signature, renderTemplate(texts.template, plan.variables)));
	}
	return outcome;
}

const UNKNOWN_OUTCOME_HINT =
	'It was not sent again, to avoid a double message. Check it with the SMS node\'s Message > Get Status (if you have the task ID) or wait for the delivery report in the SMS Trigger.';

