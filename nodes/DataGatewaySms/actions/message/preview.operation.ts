import { NodeOperationError, type IDataObject, type IExecuteFunctions, type INodeExecutionData, type INodeProperties, type INodePropertyOptions } from 'n8n-workflow';

import { findingTexts } from '../../../shared/checks/content';
import { checkVariablesAgainstTemplate, messageSize, renderTemplate } from '../../../shared/checks/sms';
import { signatureSchema, templateSchema } from '../../../shared/gateway/schemas/sms';
import type { BillKind } from '../../../shared/money/bill';
import { runForEachItem } from '../../../shared/n8n/batch';
import { executionMemory, runIdOf, sharedAnswer } from '../../../shared/state/executionMemory';
import { hintStoreFallback, openDurableStore } from '../../../shared/store/openStore';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import type { GatewayClient } from '../../../shared/transport/gatewayClient';
import { addContentHint } from '../contentHint';
import { sendFields } from './send/fields';
import { contentRefusalText, ContentReviews, optedOutError, openOptOuts, optedOutItems, unreadableOptOut } from './send/guards';
import { notLeavingFields, skipsNotLeaving } from './send/leaving';
import { notApprovedProblem, readRequest } from './send/plan';
import { noteSightings } from '../catalogue/access';
import { sightingOf, type Sighting } from '../../../shared/store/reviewedCatalogue';

/**
 * Preview is an operation of its own rather than an option of Send: its node has no sending code
 * path, so a preview can never text anyone by a switch left on or an expression, and its output
 * (the message) differs from a send's (the task ID).
 */
export const bill: BillKind = 'smsPreview';

/** This operation's entry in the Operation dropdown; message/index.ts lists the entries in the order people use them. */
export const option: INodePropertyOptions = {
	name: 'Preview',
	value: 'preview',
	description: 'Show each item\'s exact message, its length, segments and cost, and send nothing (free)',
	action: 'Preview an SMS without sending',
};

/** Send's fields (the same names, so switching between Send and Preview keeps what was filled in), without its sending options. */
export const description: INodeProperties[] = sendFields(['preview']).filter((property) => property.name !== 'sendOptions');

/**
 * The free signature and template queries, asked once per execution for every item with the same
 * IDs; what they answered is kept in `seen` for the catalogue, so that the pickers list it by name.
 */
function reviewedReader(ctx: IExecuteFunctions, client: GatewayClient) {
	const options = callOptions(ctx);
	const answers = executionMemory(ctx).answers;
	const runId = runIdOf(ctx);
	const seen = { signature: new Map<string, Sighting>(), template: new Map<string, Sighting>() };
	const read = <T>(operation: 'signatureGet' | 'templateGet', id: number, schema: typeof signatureSchema | typeof templateSchema) => {
		const params = { id: String(id) };
		const kind = operation === 'signatureGet' ? seen.signature : seen.template;
		return sharedAnswer(answers, client.questionKey(operation, params), runId, async () => {
			const data = (await client.call(operation, params, schema, options)).data;
			kind.set(String(id), { ...sightingOf(data, 'preview'), deleted: false });
			return data as T;
		}).answer;
	};
	return { read, seen };
}

/**
 * Per item: the exact message (signature + template with the item's values), its length, segments
 * and cost, and the content checks' warnings (`contentWarnings`). What Send would refuse is refused:
 * an unapproved signature or template, content the checks refuse (the one review Send makes,
 * send/guards.ts). An opted-out number is an item saying Send would skip it (from SMS 1.5; before,
 * refused). Sends nothing.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const { read, seen } = reviewedReader(this, client);
	const store = await openDurableStore(this);
	hintStoreFallback(this, store);
	const warned = new Set<string>();
	// One review per distinct message, as Send does.
	const reviews = new ContentReviews();
	const node = this.getNode();
	const skipped = new Set<number>();
	const items = await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => readRequest(this, itemIndex),
		beforeCalls: async (plans) => {
			const phones = new Map([...plans].map(([itemIndex, { request }]) => [itemIndex, request.phone]));
			const { stopped } = await optedOutItems(node, await openOptOuts(node, store, client.guard), phones);
			const refused = new Map<number, unknown>();
			for (const [itemIndex, why] of stopped) {
				const phone = phones.get(itemIndex) as string;
				if (why.reason !== 'opted-out') refused.set(itemIndex, unreadableOptOut(node, itemIndex, phone, store.label));
				else if (skipsNotLeaving(node)) skipped.add(itemIndex);
				else refused.set(itemIndex, optedOutError(node, itemIndex, phone, true));
			}
			return refused;
		},
		execute: async ({ request, variables }, itemIndex) => {
			const base = { phone: request.phone, signId: request.signId, templateId: request.templateId };
			if (skipped.has(itemIndex)) return { ...base, ...notLeavingFields({ reason: 'opted-out' }, true) };
			const [signature, template] = await Promise.all([
				read<{ name?: string | null; status?: number | null; error?: string | null }>('signatureGet', request.signId, signatureSchema),
				read<{ content?: string | null; status?: number | null; error?: string | null }>('templateGet', request.templateId, templateSchema),
			]);
			const refuse = (field: string, problem: string, fix: string) =>
				new NodeOperationError(this.getNode(), `Item ${itemIndex + 1}: ${field} ${problem}`, { description: `${fix} Sending this item would be refused before paying.`, itemIndex });
			const signatureProblem = notApprovedProblem(request.signId, signature.status, signature.error);
			if (signatureProblem) throw refuse('Signature ID', signatureProblem, 'Wait for the review to end (Signature > Get shows it) or use an approved signature.');
			const templateProblem = notApprovedProblem(request.templateId, template.status, template.error);
			if (templateProblem) throw refuse('Template ID', templateProblem, 'Wait for the review to end (Template > Get shows it) or use an approved template.');
			const content = template.content ?? '';
			const mismatch = checkVariablesAgainstTemplate(content, variables);
			if (mismatch) throw refuse('Variables', mismatch, `Give exactly the template's variables. The template reads: ${content}`);
			const signatureText = signature.name ?? '';
			const rendered = renderTemplate(content, variables);
			const review = reviews.review(signatureText, rendered);
			if (review.refusals.length > 0) {
				const { field, problem, fix } = contentRefusalText(review.refusals, false);
				throw refuse(field, problem, fix);
			}
			const warnings = review.warnings.flatMap(({ field, finding }) => findingTexts(field, [finding]));
			warnings.forEach((warning) => warned.add(warning));
			const preview: IDataObject = { ...base, message: `【${signatureText}】${rendered}`, ...messageSize(signatureText, rendered), sent: false };
			return warnings.length > 0 ? { ...preview, contentWarnings: warnings } : preview;
		},
		output: (preview) => preview as IDataObject,
	});
	if (warned.size > 0) addContentHint(this, warned.size);
	await noteSightings(this, 'signature', [...seen.signature.values()], client.accountKey);
	await noteSightings(this, 'template', [...seen.template.values()], client.accountKey);
	return items;
}
