import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { runForEachItem } from '../../shared/n8n/batch';
import { checkKeyword } from '../../shared/checks/keyword';
import { checkGatewayId, checkSignatureName, checkTemplateContent, type Problem } from '../../shared/checks/sms';
import { callOptions, gatewayClient } from '../../shared/transport/clientForNode';
import { asNodeError, GatewayFailure, inputError, MisshapenAnswer } from '../../shared/errors/failures';
import { noDataSchema, signatureSchema, templateSchema } from '../../shared/gateway/schemas/sms';
import { presentReviewed } from '../../shared/output/smsObjects';
import type { OperationName } from '../../shared/gateway/catalog';
import { keptRecordsText, openSendRecords, recordsUnavailable } from '../../shared/store/sendRecords/open';
import { CHANGE_REPEAT_WINDOW_MINUTES, changeFingerprint } from '../../shared/store/sendRecords/rules';
import { RecordsFailure } from '../../shared/store/sendRecords/sendRecords';
import { callCertainlyFailed, executionMemory, rememberOutcome, runKey } from '../../shared/state/executionMemory';

/**
 * Signatures and templates share one lifecycle (docs/gateway-api.md#states): created under review, approved or
 * rejected, modifiable only when rejected, deletable when approved or rejected. One implementation serves both.
 */
export interface ReviewedKind {
	resource: 'signature' | 'template';
	label: string;
	operations: Record<ReviewedOperation, OperationName>;
	schema: typeof signatureSchema | typeof templateSchema;
	hasContent: boolean;
	checkName: (name: string) => Problem;
	nameHint: string;
}

export type ReviewedOperation = 'create' | 'get' | 'update' | 'delete';

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
			{ name: 'Update', value: 'update', description: `Modify a rejected ${noun} and resubmit it for review`, action: `Update a ${noun}` },
		],
		default: 'create',
	};
}

/** The lifecycle rule behind a refusal that is about the state; undefined where the state decides nothing. */
function stateRuleHint(kind: ReviewedKind, operation: ReviewedOperation): string | undefined {
	const noun = kind.label.toLowerCase();
	if (operation === 'update') {
		return `Only a rejected ${noun} can be modified (it then goes back to review). An approved ${noun} cannot be modified: delete it and create a new one. One under review can be changed after its review ends; check it with Get.`;
	}
	if (operation === 'delete') {
		return `Approved and rejected ${noun}s can be deleted; one under review may be refused until its review ends. Check it with Get.`;
	}
	return undefined;
}

/**
 * Whether the gateway refused a change because of the object's state. The gateway shows no codes, so
 * besides the emulator's 40004 the message is read tolerantly; any other refusal keeps its own hint.
 */
const STATE_REFUSAL_CODE = 40004;
const STATE_REFUSAL_WORDING = /\b(state|status|approved|under review|review(ed|ing)?)\b|cannot be modified|审核|状态|已通过|通过的/i;

export function refusedForState(failure: GatewayFailure): boolean {
	return failure.kind === 'gateway-code' && (failure.gatewayCode === STATE_REFUSAL_CODE || STATE_REFUSAL_WORDING.test(failure.message));
}

type Plan = { params: Record<string, string | number> };

/** The answer of a change that another execution of this node already made. */
const SKIPPED_AS_REPEAT = Symbol('skipped as repeat');

export function reviewedOperation(kind: ReviewedKind, operation: ReviewedOperation) {
	const description = fields(kind, operation);
	async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
		const client = await gatewayClient(this);
		const options = callOptions(this);
		const gatewayOperation = kind.operations[operation];
		const schema: z.ZodType = operation === 'delete' ? noDataSchema : kind.schema;
		// Get is free and safe to repeat; a change made twice by Retry On Fail would create a duplicate.
		// Changes are kept per run: Retry On Fail finds them, a loop's next run makes its own. Across
		// executions (a retried one) the same create from this node is skipped for a day: a second
		// create makes a duplicate, while a repeated update or delete gets the gateway's own answer.
		const changes = operation === 'get' ? undefined : executionMemory(this).changes;
		const records = changes && operation === 'create' ? await openSendRecords(this, { repeatWindowMinutes: CHANGE_REPEAT_WINDOW_MINUTES }) : undefined;
		const made = new Map<number, string | null>();
		const keyOf = (itemIndex: number, params: Plan['params']) => runKey(this, itemIndex, client.questionKey(gatewayOperation, params));
		const changeOnce = async (itemIndex: number, params: Plan['params']): Promise<unknown> => {
			const ask = async () => (await client.call(gatewayOperation, params, schema, options)).data;
			if (!changes) return await ask();
			const key = keyOf(itemIndex, params);
			const earlier = changes.get(key);
			if (earlier) return await earlier.outcome;
			if (!records) return await rememberOutcome(changes, key, { outcome: ask() });
			// Made by another execution, or by an earlier try of this item in another process: not made again.
			if (['repeat', 'earlier'].includes(records.decisionOf(itemIndex)?.kind ?? '')) return SKIPPED_AS_REPEAT;
			const claimed = await records.claim(itemIndex).catch((error: unknown) => Promise.reject(recordsUnavailable(this.getNode(), `${kind.label} create`, error, CHANGE_REPEAT_WINDOW_MINUTES, itemIndex)));
			if (claimed !== 'go') return SKIPPED_AS_REPEAT;
			const settled = await rememberOutcome(changes, key, { outcome: ask() }).then(
				(answer) => ({ answer }),
				(error: unknown) => ({ error }),
			);
			if (!('error' in settled)) {
				made.set(itemIndex, null);
				return settled.answer;
			}
			if (callCertainlyFailed(settled.error)) {
				await records.release([itemIndex]).catch((failure: unknown) => {
					const error = settled.error as Error & { description?: string };
					if (failure instanceof RecordsFailure) error.description = `${error.description ?? ''} ${keptRecordsText(failure, CHANGE_REPEAT_WINDOW_MINUTES)}`.trim();
				});
			}
			throw settled.error;
		};
		const batch = runForEachItem<Plan, unknown>(this, {
			beforeCalls: records
				? async (plans) => {
						const fresh = [...plans].filter(([itemIndex, plan]) => !changes?.has(keyOf(itemIndex, plan.params)));
						await records
							.reserve(fresh.map(([itemIndex, plan]) => ({ itemIndex, message: changeFingerprint(client.accountKey, gatewayOperation, plan.params) })))
							.catch((error: unknown) => Promise.reject(recordsUnavailable(this.getNode(), `${kind.label} create`, error, CHANGE_REPEAT_WINDOW_MINUTES)));
					}
				: undefined,
			concurrency: client.settings.limiter.maxConcurrent,
			plan: (itemIndex) => {
				const fail = (field: string, problem: string, fix: string) => inputError(this.getNode(), itemIndex, field, problem, fix);
				const params: Record<string, string | number> = {};
				if (operation !== 'create') {
					const checked = checkGatewayId(this.getNodeParameter('id', itemIndex, ''));
					if (checked.problem !== undefined) throw fail(`${kind.label} ID`, checked.problem, `Use the ID that Create returned.`);
					params.id = checked.id;
				}
				if (operation === 'create' || operation === 'update') {
					const name = String(this.getNodeParameter('name', itemIndex, '')).trim();
					const nameProblem = kind.checkName(name);
					if (nameProblem) throw fail(kind.resource === 'signature' ? 'Signature Text' : 'Name', nameProblem, kind.nameHint);
					params.name = name;
					if (kind.hasContent) {
						const content = String(this.getNodeParameter('content', itemIndex, ''));
						if (operation === 'create' || content.trim() !== '') {
							const contentProblem = checkTemplateContent(content);
							if (contentProblem) throw fail('Content', contentProblem, 'Write variables as ${name} with letters and underscore, and leave out 【】 and [].');
							params.content = content;
						}
					}
					const remark = String(this.getNodeParameter('remark', itemIndex, '')).trim();
					if (!remark) throw fail('Description', 'is empty', 'Describe the usage scenario (and your website) for the reviewers.');
					params.remark = remark;
				}
				return { params };
			},
			execute: async (plan, itemIndex) => {
				try {
					return await changeOnce(itemIndex, plan.params);
				} catch (error) {
					// Made (code 0), with an answer that does not fit: output with a warning (runForEachItem), not an error.
					if (error instanceof MisshapenAnswer) return error;
					const stateHint = error instanceof GatewayFailure && refusedForState(error) ? stateRuleHint(kind, operation) : undefined;
					const uncertainChange = changes !== undefined && error instanceof GatewayFailure && !callCertainlyFailed(error);
					throw asNodeError(
						this.getNode(),
						stateHint && error instanceof GatewayFailure
							? new GatewayFailure({ kind: error.kind, operation: error.operation, message: error.message, gatewayCode: error.gatewayCode, hint: stateHint })
							: uncertainChange
								? new GatewayFailure({
										kind: 'outcome-unknown',
										operation: error.operation,
										message: `${error.message}; the change may or may not have been made`,
										httpStatus: error.httpStatus,
										hint: `It was not made again, to avoid a duplicate. Check with ${kind.label} > Get (or your gateway account) before repeating it.`,
									})
								: error,
						itemIndex,
					);
				}
			},
			output: (data, plan) =>
				data === SKIPPED_AS_REPEAT
					? { skippedAsRepeat: true, ...plan.params }
					: operation === 'delete'
						? { deleted: true, id: plan.params.id }
						: presentReviewed(data as IDataObject),
		});
		// Changes that never started (a failure stopped the batch first) are not kept as made.
		const outcome = await batch.then(
			(items) => ({ items }),
			(error: unknown) => ({ error }),
		);
		// A create left "outcome unknown" is skipped all the same: the failure changes nothing for the user.
		await records?.markSent(made);
		const kept = await records?.releaseUnstarted().then(
			() => undefined,
			(failure: unknown) => failure,
		);
		if (kept instanceof RecordsFailure) {
			const text = keptRecordsText(kept, CHANGE_REPEAT_WINDOW_MINUTES);
			if (!('error' in outcome)) this.addExecutionHints?.({ message: text, location: 'outputPane' });
			else if (outcome.error instanceof Error) Object.assign(outcome.error, { description: `${(outcome.error as { description?: string }).description ?? ''} ${text}`.trim() });
		}
		if ('error' in outcome) throw outcome.error;
		return outcome.items;
	}
	return { description, execute };
}
