import { NodeOperationError, type IDataObject, type IExecuteFunctions, type INodeExecutionData, type INodeProperties } from 'n8n-workflow';

import { checkMobileNumber } from '../../../shared/checks/phone';
import {
	checkVariables,
	checkVariablesAgainstTemplate,
	messageSize,
	renderTemplate,
	type MessageSize,
} from '../../../shared/checks/sms';
import { spendMeter, type callOptions } from '../../../shared/client';
import { asNodeError, GatewayFailure, inputError } from '../../../shared/errors';
import { sendResultSchema, signatureSchema, templateSchema } from '../../../shared/schemas/sms';
import { openSendRecords, recordsUnavailable } from '../../../shared/sendRecords';
import { messageFingerprint, type SendDecision, type SmsLimits, type SmsSendRecords } from '../../../shared/smsGuard';
import { priceOf, roundYuan, type SpendMeter } from '../../../shared/spend';
import {
	callCertainlyFailed,
	executionMemory,
	rememberOutcome,
	runIdOf,
	runKey,
	sharedAnswer,
	type ExecutionMemory,
} from '../../../shared/state';
import {
	DEFAULT_SMS_LIMITS,
	MAX_TEMPLATE_VARIABLES,
	MAX_VARIABLE_VALUE_LENGTH,
	REVIEW_STATUS,
	REVIEW_STATUS_LABELS,
} from '../../../shared/spec';
import type { GatewayClient } from '../../../shared/transport';

type CallOptions = ReturnType<typeof callOptions>;

/** The fields of Send, shared by Send and Send and Check Delivery. */
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
			description: 'How to give the values of the template\'s ${name} placeholders. With none, no params are sent.',
			displayOptions: { show },
		},
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
							placeholder: 'code',
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
			options: [
				{
					displayName: 'Max per Number per Day',
					name: 'perDay',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: 10, // DEFAULT_SMS_LIMITS.perDay; the linter wants a literal
					description: `Messages this node sends to one number in one calendar day, China time (UTC+8), counted across executions; the gateway default is ${DEFAULT_SMS_LIMITS.perDay}`,
				},
				{
					displayName: 'Max per Number per Hour',
					name: 'perHour',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: 5, // DEFAULT_SMS_LIMITS.perHour; the linter wants a literal
					description: `Messages this node sends to one number in one calendar hour, counted across executions; the gateway default is ${DEFAULT_SMS_LIMITS.perHour}`,
				},
				{
					displayName: 'Max per Number per Minute',
					name: 'perMinute',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: 1, // DEFAULT_SMS_LIMITS.perMinute; the linter wants a literal
					description: `Messages this node sends to one number in one calendar minute, counted across executions; the gateway default is ${DEFAULT_SMS_LIMITS.perMinute}`,
				},
				{
					displayName: 'Read Template and Signature',
					name: 'readTemplate',
					type: 'boolean',
					default: false,
					description:
						'Whether to read the template and signature first (free queries, once per execution): an unapproved one or variables that do not fit the template stop the item before the paid send, and the output gains the message length (signature with its 【】 and content; the 2 brackets count, so the estimate is never below the bill), segments and estimated cost',
				},
				{
					displayName: 'Repeat Window (Minutes)',
					name: 'repeatWindowMinutes',
					type: 'number',
					typeOptions: { minValue: 0 },
					default: 10,
					description:
						'A retried execution or a double-submitted form must not text a person twice: another execution of this node does not send the same message (number, signature, template, variables) again within this many minutes, and outputs skippedAsRepeat: true instead. Runs within one execution (loops) always send. Checked in tenths of the window: a repeat within 90% of it is always caught. 0 turns it off.',
				},
				{
					displayName: 'Signature Text',
					name: 'signatureText',
					type: 'string',
					default: '',
					description:
						'The text of the signature without 【】, to count the message length without reading it from the gateway; the 2 brackets the gateway adds are counted too (ignored when Read Template and Signature is on)',
				},
				{
					displayName: 'Template Content',
					name: 'templateContent',
					type: 'string',
					default: '',
					description:
						'The text of the template with its ${name} placeholders: the variables are checked against it and the message length counted, without reading it from the gateway (ignored when Read Template and Signature is on)',
				},
			],
		},
	];
}

export interface SendPlan {
	itemIndex: number;
	/** Identifies this item's send within the run: node, run, item and the exact request. */
	key: string;
	phone: string;
	params: { signId: number; templateId: number; phone: string; params?: IDataObject };
	/** The message, for the repeat window across executions. */
	message: string;
	/** Known when both the signature and the template text are known. */
	size?: MessageSize;
}

export interface SendOutcome extends Partial<MessageSize> {
	taskId: string | null;
	phone: string;
	signId: number;
	templateId: number;
	/** True when this item was already sent earlier in this run (Retry On Fail) and was not sent again. */
	deduplicated: boolean;
	/** True when another execution of this node sent the same message within the repeat window. */
	skippedAsRepeat: boolean;
	/** What the send costs when delivered: segments × price when the text is known, else one message. */
	costYuan: number;
	/** Present only when n8n offers no processed-data store: the records then last for this process. */
	sendRecords?: string;
}

/** What every item's plan shares within one run of the node. */
export interface SendRun {
	ctx: IExecuteFunctions;
	client: GatewayClient;
	options: CallOptions;
	memory: ExecutionMemory;
	records: SmsSendRecords;
	meter: SpendMeter;
	decisions: Map<number, SendDecision>;
	/** Items whose send was attempted in this try, and the task IDs of those sent. */
	attempted: Set<number>;
	sent: Map<number, string>;
}

export function startSendRun(ctx: IExecuteFunctions, client: GatewayClient, options: CallOptions): SendRun {
	const sendOptions = ctx.getNodeParameter('sendOptions', 0, {}) as IDataObject;
	const window = Number(sendOptions.repeatWindowMinutes ?? 10);
	if (!Number.isFinite(window) || window < 0) {
		throw inputError(ctx.getNode(), 0, 'Repeat Window (Minutes)', `"${sendOptions.repeatWindowMinutes}" is not a number of 0 or more`, 'Set it to 10, or 0 to turn the repeat check off.');
	}
	return {
		ctx,
		client,
		options,
		memory: executionMemory(ctx),
		records: openSendRecords(ctx, client, smsLimits(ctx), window),
		meter: spendMeter(ctx, client),
		decisions: new Map(),
		attempted: new Set(),
		sent: new Map(),
	};
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

const LIMIT_LABELS: Record<keyof SmsLimits, string> = {
	perMinute: 'Max per Number per Minute',
	perHour: 'Max per Number per Hour',
	perDay: 'Max per Number per Day',
};

/** The per-number limits: a node-wide option, read once. */
export function smsLimits(ctx: IExecuteFunctions): SmsLimits {
	const options = ctx.getNodeParameter('sendOptions', 0, {}) as IDataObject;
	const limits = { ...DEFAULT_SMS_LIMITS } as SmsLimits;
	for (const limit of Object.keys(LIMIT_LABELS) as Array<keyof SmsLimits>) {
		if (options[limit] === undefined) continue;
		const value = Number(options[limit]);
		if (!Number.isInteger(value) || value < 1) {
			throw inputError(ctx.getNode(), 0, LIMIT_LABELS[limit], `"${options[limit]}" is not a whole number of 1 or more`, `Set it to the limit your gateway account has (the default is ${DEFAULT_SMS_LIMITS[limit]}).`);
		}
		limits[limit] = value;
	}
	return limits;
}

interface KnownTexts {
	signature?: string;
	template?: string;
	/** Set when the signature and template were read from the gateway. */
	read?: { signatureStatus?: number | null; templateStatus?: number | null; templateError?: string | null; signatureError?: string | null };
}

/** A free query, asked once per execution and credential: the answer is shared by every item. */
function askOnce<T>(run: SendRun, key: string, load: () => Promise<T>): Promise<T> {
	return sharedAnswer(run.memory.answers, key, runIdOf(run.ctx), load).answer;
}

/** Signature and template text: read from the gateway when asked to, otherwise from the options. */
async function knownTexts(run: SendRun, itemIndex: number, signId: number, templateId: number): Promise<KnownTexts> {
	const sendOptions = run.ctx.getNodeParameter('sendOptions', itemIndex, {}) as IDataObject;
	if (sendOptions.readTemplate !== true) {
		return {
			signature: (sendOptions.signatureText as string) || undefined,
			template: (sendOptions.templateContent as string) || undefined,
		};
	}
	const { client, options } = run;
	const signatureParams = { id: String(signId) };
	const templateParams = { id: String(templateId) };
	const [signature, template] = await Promise.all([
		askOnce(run, client.questionKey('signatureGet', signatureParams), async () => (await client.call('signatureGet', signatureParams, signatureSchema, options)).data),
		askOnce(run, client.questionKey('templateGet', templateParams), async () => (await client.call('templateGet', templateParams, templateSchema, options)).data),
	]);
	return {
		signature: signature.name ?? undefined,
		template: template.content ?? undefined,
		read: { signatureStatus: signature.status, signatureError: signature.error, templateStatus: template.status, templateError: template.error },
	};
}

function notApprovedProblem(id: number, status: number | null | undefined, reason: string | null | undefined): string | undefined {
	if (status === undefined || status === null || status === REVIEW_STATUS.approved) return undefined;
	const label = REVIEW_STATUS_LABELS[String(status)] ?? `in status ${status}`;
	return `${id} is ${label}${reason ? ` (${reason})` : ''}; the gateway sends only with an approved one`;
}

/**
 * Reads and checks one item's send, in item order, before anything is paid: the number, the
 * variables, the template's placeholders and approval when known, and the per-number limits.
 */
export async function planSend(run: SendRun, itemIndex: number): Promise<SendPlan> {
	const { ctx, client, memory } = run;
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
	const key = runKey(ctx, itemIndex, client.questionKey('smsSend', params));
	const message = messageFingerprint({ account: client.accountKey, ...params });
	const sentBefore = memory.sends.has(key);

	// An item sent before in this execution keeps its earlier send, whatever the template looks like now.
	const texts = sentBefore
		? await knownTexts(run, itemIndex, signId, templateId).catch((): KnownTexts => ({}))
		: await knownTexts(run, itemIndex, signId, templateId);
	const size = texts.signature !== undefined && texts.template !== undefined ? messageSize(texts.signature, renderTemplate(texts.template, variables)) : undefined;
	if (sentBefore) return { itemIndex, key, phone: phone.value, params, message, size };

	const refuse = (field: string, problem: string, fix: string) =>
		texts.read
			? new NodeOperationError(ctx.getNode(), `Item ${itemIndex + 1}: ${field} ${problem}`, {
					description: `${fix} The message was not sent; only the free template and signature queries were made.`,
					itemIndex,
				})
			: inputError(ctx.getNode(), itemIndex, field, problem, fix);
	const signatureProblem = notApprovedProblem(signId, texts.read?.signatureStatus, texts.read?.signatureError);
	if (signatureProblem) throw refuse('Signature ID', signatureProblem, 'Wait for the review to end (Signature > Get shows it) or use an approved signature.');
	const templateProblem = notApprovedProblem(templateId, texts.read?.templateStatus, texts.read?.templateError);
	if (templateProblem) throw refuse('Template ID', templateProblem, 'Wait for the review to end (Template > Get shows it) or use an approved template.');
	if (texts.template !== undefined) {
		const mismatch = checkVariablesAgainstTemplate(texts.template, variables);
		if (mismatch) throw refuse('Variables', mismatch, `Give exactly the template's variables. The template reads: ${texts.template}`);
	}
	return { itemIndex, key, phone: phone.value, params, message, size };
}

const UNKNOWN_OUTCOME_HINT =
	'It was not sent again, to avoid a double message. No task ID came back, so check for it before sending again: a delivery report to this number (SMS Trigger) or the send log of your gateway account; with a task ID, Message > Get Status shows it.';

/** The same failure, reworded to say that the message may have gone out and how to find out. */
function unknownOutcome(error: GatewayFailure, message: string): GatewayFailure {
	return new GatewayFailure({ kind: 'outcome-unknown', operation: 'smsSend', message, httpStatus: error.httpStatus, hint: UNKNOWN_OUTCOME_HINT });
}

const costOf = (plan: SendPlan) => plan.size?.estimatedCostYuan ?? priceOf('smsSend');

/**
 * After every item is checked and before the first send: decides repeats and per-number limits
 * across executions (one read-and-record of the node's records) and checks the spending cap.
 * Items already sent in this run (Retry On Fail) are left alone. Returns the refused items.
 */
export async function reserveSends(run: SendRun, plans: SendPlan[]): Promise<Map<number, unknown>> {
	const { ctx, records, memory, meter } = run;
	const fresh = plans.filter((plan) => !memory.sends.has(plan.key));
	let decisions: Map<number, SendDecision>;
	try {
		decisions = await records.reserve(fresh.map((plan) => ({ itemIndex: plan.itemIndex, phone: plan.phone, message: plan.message })));
	} catch (error) {
		throw recordsUnavailable(ctx.getNode(), records.where, 'SMS', error);
	}
	for (const [itemIndex, decision] of decisions) run.decisions.set(itemIndex, decision);
	const refused = new Map<number, unknown>();
	for (const plan of fresh) {
		const decision = decisions.get(plan.itemIndex);
		if (decision?.kind === 'limit') {
			refused.set(
				plan.itemIndex,
				inputError(ctx.getNode(), plan.itemIndex, 'Phone Number', `not sent: this ${decision.problem}`, 'Send fewer messages to this number, or raise the limits in Options if your account allows more.'),
			);
		}
	}
	const toSend = fresh.filter((plan) => decisions.get(plan.itemIndex)?.kind === 'send');
	const segments = toSend.reduce((sum, plan) => sum + (plan.size?.segments ?? 1), 0);
	const overCap = meter.overCap(
		roundYuan(toSend.reduce((sum, plan) => sum + costOf(plan), 0)),
		`${toSend.length} SMS, ${segments} message segment${segments === 1 ? '' : 's'} at ${priceOf('smsSend')} yuan`,
	);
	if (overCap) {
		await records.release(records.holding());
		throw overCap;
	}
	return refused;
}

/** Lets go of the records of items whose send never started (a failure stopped the batch first). */
export async function releaseUnsent(run: SendRun): Promise<void> {
	await run.records.releaseAllBut(run.attempted);
}

/**
 * The error that stopped the batch, naming the items already sent: their records stay, so a
 * retried execution sends only the rest.
 */
export function withSentItems(run: SendRun, error: unknown): unknown {
	if (run.sent.size === 0 || !(error instanceof Error)) return error;
	const sent = [...run.sent].sort(([a], [b]) => a - b).map(([itemIndex, taskId]) => `item ${itemIndex + 1} (task ${taskId})`);
	error.message = `${error.message} [already sent, and not sent again when the execution is retried: ${sent.join(', ')}]`;
	return error;
}

/** Runs the sends of one node run, then lets go of what was never sent and names what was. */
export async function runSends(run: SendRun, batch: () => Promise<INodeExecutionData[]>): Promise<INodeExecutionData[]> {
	const outcome = await batch().then(
		(items) => ({ items }),
		(error: unknown) => ({ error }),
	);
	await releaseUnsent(run);
	if ('error' in outcome) throw withSentItems(run, outcome.error);
	return outcome.items;
}

/** Sends once per item and run; a re-run of the node (Retry On Fail) hands back the earlier task ID. */
export async function sendOnce(run: SendRun, plan: SendPlan): Promise<SendOutcome> {
	const { ctx, client, memory, records, options } = run;
	const base = {
		phone: plan.phone,
		signId: plan.params.signId,
		templateId: plan.params.templateId,
		...(records.acrossRestarts ? {} : { sendRecords: 'this n8n process only' }),
	};
	const earlier = memory.sends.get(plan.key);
	if (!earlier && run.decisions.get(plan.itemIndex)?.kind === 'repeat') {
		return { taskId: null, ...base, deduplicated: false, skippedAsRepeat: true, costYuan: 0, ...plan.size };
	}
	let taskId: string;
	try {
		if (earlier) {
			taskId = await earlier.outcome;
		} else {
			run.attempted.add(plan.itemIndex);
			const outcome = (async () => (await client.call('smsSend', plan.params, sendResultSchema, options)).data.id)();
			taskId = await rememberOutcome(memory.sends, plan.key, { outcome });
			run.meter.add(costOf(plan));
		}
	} catch (error) {
		if (!(error instanceof GatewayFailure) || callCertainlyFailed(error)) {
			if (!earlier) await records.release([plan.itemIndex]);
			throw asNodeError(ctx.getNode(), error, plan.itemIndex);
		}
		if (!earlier) run.meter.add(costOf(plan)); // it may have gone out and be billed
		const failure = earlier
			? unknownOutcome(error, `not sent again: an earlier attempt in this run to ${plan.phone} has an unknown outcome (${error.message})`)
			: unknownOutcome(error, `outcome unknown, the SMS to ${plan.phone} may have been sent: ${error.message}`);
		throw asNodeError(ctx.getNode(), failure, plan.itemIndex);
	}
	run.sent.set(plan.itemIndex, taskId);
	return { taskId, ...base, deduplicated: earlier !== undefined, skippedAsRepeat: false, costYuan: costOf(plan), ...plan.size };
}
