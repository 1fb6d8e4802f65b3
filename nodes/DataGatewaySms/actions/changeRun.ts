import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { runForEachItem } from '../../shared/n8n/batch';
import { findingTexts, reviewSignatureName, reviewTemplateContent, type ContentReview } from '../../shared/checks/content';
import { checkGatewayId, type Problem } from '../../shared/checks/sms';
import { callOptions, gatewayClient } from '../../shared/transport/clientForNode';
import { asNodeError, GatewayFailure, inputError, MisshapenAnswer } from '../../shared/errors/failures';
import { noDataSchema, type Signature, type signatureSchema, type Template, type templateSchema } from '../../shared/gateway/schemas/sms';
import type { OperationName } from '../../shared/gateway/catalog';
import { presentReviewed } from '../../shared/output/smsObjects';
import { openSendRecords } from '../../shared/store/sendRecords/open';
import { CHANGE_REPEAT_WINDOW_MINUTES, changeFingerprint, type SendDecision } from '../../shared/store/sendRecords/rules';
import { RecordsFailure, type SendRecords } from '../../shared/store/sendRecords/sendRecords';
import { callCertainlyFailed, executionMemory, rememberOutcome, runKey, type ExecutionMemory } from '../../shared/state/executionMemory';
import type { GatewayClient } from '../../shared/transport/gatewayClient';
import { addContentHint } from './contentHint';
import { inPlainWords } from './message/send/plainWords';
import { keptRecordsText, recordsUnavailable, withKeptRecords } from './sendErrors';
import { noteSightings } from './catalogue/access';
import { sightingOf, type Sighting } from '../../shared/store/reviewedCatalogue';

/** What sets a signature's operations apart from a template's (signaturesAndTemplates.ts gives the two). */
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

/** The lifecycle rule behind a refusal that is about the state; undefined where the state decides nothing. */
export function stateRuleHint(kind: ReviewedKind, operation: ReviewedOperation): string | undefined {
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

type Params = Record<string, string | number>;

/** The answer of a change that another execution of this node already made. */
const SKIPPED_AS_REPEAT = Symbol('skipped as repeat');

/**
 * One run of a signature or template operation, in steps: read each item (readChange), reserve the
 * creates in the send records, make each change once (changeOnce), then mark what was made and
 * release what never started (finish). Get is free and safe to repeat; a change made twice by
 * Retry On Fail would create a duplicate. Changes are kept per run: Retry On Fail finds them, a
 * loop's next run makes its own. Across executions (a retried one) the same create from this node
 * is skipped for a day: a second create makes a duplicate, while a repeated update or delete gets
 * the gateway's own answer.
 */
export async function runChanges(ctx: IExecuteFunctions, kind: ReviewedKind, operation: ReviewedOperation): Promise<INodeExecutionData[]> {
	const run = new ChangeRun(ctx, kind, operation, await gatewayClient(ctx));
	await run.openRecords();
	// The content checks' warnings by item: they do not stop the item, they come out on it.
	const warnings = new Map<number, string[]>();
	const batch = runForEachItem<Params, unknown>(ctx, {
		beforeCalls: run.records ? async (plans) => await run.reserve(plans) : undefined,
		concurrency: run.client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => readChange(ctx, kind, operation, itemIndex, warnings),
		execute: async (params, itemIndex) => await run.changeOnce(itemIndex, params),
		output: (data, params, itemIndex) => withWarnings(presentChange(ctx, kind, operation, data, params), warnings.get(itemIndex)),
	});
	const items = await run.finish(batch);
	const count = [...warnings.values()].reduce((sum, lines) => sum + lines.length, 0);
	if (count > 0) addContentHint(ctx, count);
	return items;
}

const withWarnings = (json: IDataObject, warnings: string[] | undefined): IDataObject => (warnings?.length ? { ...json, contentWarnings: warnings } : json);

/**
 * The content checks of a field (checks/content.ts): a refusal stops the item before the call,
 * naming the field; warnings are kept for the item's output.
 */
function reviewField(fail: (field: string, problem: string, fix: string) => Error, field: string, review: ContentReview, warnings: string[]): void {
	const [refusal] = review.refusals;
	if (refusal) throw fail(field, review.refusals.map((finding) => finding.problem).join('; '), [...new Set(review.refusals.map((finding) => finding.fix))].join(' '));
	warnings.push(...findingTexts(field, review.warnings));
}

/** The item's change, read and checked: the ID, the name, the content and the description as the operation needs them. */
function readChange(ctx: IExecuteFunctions, kind: ReviewedKind, operation: ReviewedOperation, itemIndex: number, warnings: Map<number, string[]>): Params {
	const fail = (field: string, problem: string, fix: string) => inputError(ctx.getNode(), itemIndex, field, problem, fix);
	const params: Params = {};
	const found: string[] = [];
	if (operation !== 'create') {
		const checked = checkGatewayId(ctx.getNodeParameter('id', itemIndex, ''));
		if (checked.problem !== undefined) throw fail(`${kind.label} ID`, checked.problem, `Use the ID that Create returned.`);
		params.id = checked.id;
	}
	if (operation === 'create' || operation === 'update') {
		const name = String(ctx.getNodeParameter('name', itemIndex, '')).trim();
		const nameProblem = kind.checkName(name);
		if (nameProblem) throw fail(kind.resource === 'signature' ? 'Signature Text' : 'Name', nameProblem, kind.nameHint);
		if (kind.resource === 'signature') reviewField(fail, 'Signature Text', reviewSignatureName(name), found);
		params.name = name;
		if (kind.hasContent) {
			const content = String(ctx.getNodeParameter('content', itemIndex, ''));
			if (operation === 'create' || content.trim() !== '') {
				reviewField(fail, 'Content', reviewTemplateContent(content), found);
				params.content = content;
			}
		}
		const remark = String(ctx.getNodeParameter('remark', itemIndex, '')).trim();
		if (!remark) throw fail('Description', 'is empty', 'Describe the usage scenario (and your website) for the reviewers.');
		params.remark = remark;
	}
	if (found.length > 0) warnings.set(itemIndex, found);
	return params;
}

function presentChange(ctx: IExecuteFunctions, kind: ReviewedKind, operation: ReviewedOperation, data: unknown, params: Params): IDataObject {
	if (data === SKIPPED_AS_REPEAT) {
		if (!inPlainWords(ctx)) return { skippedAsRepeat: true, ...params };
		const label = kind.label.toLowerCase();
		return { created: false, notCreatedBecause: `an earlier execution created the same ${label} within a day: a second would be a duplicate`, ...params };
	}
	return operation === 'delete' ? { deleted: true, id: params.id } : presentReviewed(data as IDataObject);
}

class ChangeRun {
	private readonly options;
	private readonly gatewayOperation;
	private readonly schema: z.ZodType;
	/** This execution's changes, found again by Retry On Fail; undefined for Get. */
	private readonly changes: ExecutionMemory['changes'] | undefined;
	/** Creates across executions; undefined for the other operations. */
	records: SendRecords | undefined;
	private readonly decisions = new Map<number, SendDecision>();
	private readonly made = new Map<number, string | null>();
	/** What the gateway said about each object, for the catalogue. */
	private readonly seen: Sighting[] = [];

	constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly kind: ReviewedKind,
		private readonly operation: ReviewedOperation,
		readonly client: GatewayClient,
	) {
		this.options = callOptions(ctx);
		this.gatewayOperation = kind.operations[operation];
		this.schema = operation === 'delete' ? noDataSchema : kind.schema;
		this.changes = operation === 'get' ? undefined : executionMemory(ctx).changes;
	}

	async openRecords(): Promise<void> {
		if (this.changes && this.operation === 'create') this.records = await openSendRecords(this.ctx, { repeatWindowMinutes: CHANGE_REPEAT_WINDOW_MINUTES });
	}

	private keyOf(itemIndex: number, params: Params): string {
		return runKey(this.ctx, itemIndex, this.client.questionKey(this.gatewayOperation, params));
	}

	/** The creates not yet made in this run, reserved across executions; each decision kept for its item. */
	async reserve(plans: Map<number, Params>): Promise<void> {
		const records = this.records as SendRecords;
		const fresh = [...plans].filter(([itemIndex, params]) => !this.changes?.has(this.keyOf(itemIndex, params)));
		const decided = await records
			.reserve(fresh.map(([itemIndex, params]) => ({ itemIndex, message: changeFingerprint(this.client.accountKey, this.gatewayOperation, params) })))
			.catch((error: unknown) => Promise.reject(recordsUnavailable(this.ctx.getNode(), `${this.kind.label} create`, error, CHANGE_REPEAT_WINDOW_MINUTES)));
		for (const [itemIndex, decision] of decided) this.decisions.set(itemIndex, decision);
	}

	/** Makes the item's change once; its failure says what happened and what to do. */
	async changeOnce(itemIndex: number, params: Params): Promise<unknown> {
		try {
			const answer = await this.makeOnce(itemIndex, params);
			this.see(answer, params);
			return answer;
		} catch (error) {
			// Made (code 0), with an answer that does not fit: output with a warning (runForEachItem), not an error.
			if (error instanceof MisshapenAnswer) return error;
			throw asNodeError(this.ctx.getNode(), this.explain(error), itemIndex);
		}
	}

	private async makeOnce(itemIndex: number, params: Params): Promise<unknown> {
		const ask = async () => (await this.client.call(this.gatewayOperation, params, this.schema, this.options)).data;
		const { changes, records } = this;
		if (!changes) return await ask();
		const key = this.keyOf(itemIndex, params);
		const earlier = changes.get(key);
		if (earlier) return await earlier.outcome;
		if (!records) return await rememberOutcome(changes, key, { outcome: ask() });
		// Made by another execution, or by an earlier try of this item in another process: not made again.
		if (['repeat', 'earlier'].includes(this.decisions.get(itemIndex)?.kind ?? '')) return SKIPPED_AS_REPEAT;
		const claimed = await records.claim(itemIndex).catch((error: unknown) => Promise.reject(recordsUnavailable(this.ctx.getNode(), `${this.kind.label} create`, error, CHANGE_REPEAT_WINDOW_MINUTES, itemIndex)));
		if (claimed !== 'go') return SKIPPED_AS_REPEAT;
		const settled = await rememberOutcome(changes, key, { outcome: ask() }).then(
			(answer) => ({ answer }),
			(error: unknown) => ({ error }),
		);
		if (!('error' in settled)) {
			this.made.set(itemIndex, null);
			return settled.answer;
		}
		if (callCertainlyFailed(settled.error)) await records.release([itemIndex]).catch((failure: unknown) => withKeptRecords(settled.error, failure, CHANGE_REPEAT_WINDOW_MINUTES));
		throw settled.error;
	}

	/** The catalogue's view of an answer: a create or update is (back) under review, which its answer need not say. */
	private see(answer: unknown, params: Params): void {
		const seenBy = this.operation;
		if (answer === SKIPPED_AS_REPEAT || answer instanceof MisshapenAnswer) return;
		if (seenBy === 'delete') {
			this.seen.push({ id: String(params.id), deleted: true, seenBy });
			return;
		}
		const object = answer as Signature | Template | undefined;
		if (object?.id === undefined || object.id === null) return;
		const sighting: Sighting = { ...sightingOf(object, seenBy), deleted: false };
		if (seenBy !== 'get') {
			Object.assign(sighting, { status: sighting.status ?? 0, error: null, name: sighting.name ?? params.name });
			if (this.kind.hasContent && params.content !== undefined) sighting.content ??= String(params.content);
		}
		this.seen.push(sighting);
	}

	/** A refusal for the object's state gets the lifecycle rule; a change that may have been made says so. */
	private explain(error: unknown): unknown {
		if (!(error instanceof GatewayFailure)) return error;
		const stateHint = refusedForState(error) ? stateRuleHint(this.kind, this.operation) : undefined;
		if (stateHint) return new GatewayFailure({ kind: error.kind, operation: error.operation, message: error.message, gatewayCode: error.gatewayCode, hint: stateHint });
		if (this.changes === undefined || callCertainlyFailed(error)) return error;
		return new GatewayFailure({
			kind: 'outcome-unknown',
			operation: error.operation,
			message: `${error.message}; the change may or may not have been made`,
			httpStatus: error.httpStatus,
			hint: `It was not made again, to avoid a duplicate. Check with ${this.kind.label} > Get (or your gateway account) before repeating it.`,
		});
	}

	/** Marks the creates made, releases those never started (a failure stopped the batch first), and says what stays. */
	async finish(batch: Promise<INodeExecutionData[]>): Promise<INodeExecutionData[]> {
		const outcome = await batch.then(
			(items) => ({ items }),
			(error: unknown) => ({ error }),
		);
		await noteSightings(this.ctx, this.kind.resource, this.seen, this.client.accountKey);
		// A create left "outcome unknown" is skipped all the same: the failure changes nothing for the user.
		await this.records?.markSent(this.made);
		const kept = await this.records?.releaseUnstarted().then(
			() => undefined,
			(failure: unknown) => failure,
		);
		if (kept instanceof RecordsFailure) {
			const text = keptRecordsText(kept, CHANGE_REPEAT_WINDOW_MINUTES);
			if (!('error' in outcome)) this.ctx.addExecutionHints?.({ message: text, location: 'outputPane' });
			else if (outcome.error instanceof Error) Object.assign(outcome.error, { description: `${(outcome.error as { description?: string }).description ?? ''} ${text}`.trim() });
		}
		if ('error' in outcome) throw outcome.error;
		return outcome.items;
	}
}
