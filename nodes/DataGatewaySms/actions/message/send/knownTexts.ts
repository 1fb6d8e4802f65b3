import { NodeOperationError, type IDataObject } from 'n8n-workflow';
import type { z } from 'zod/v4';

import { signatureSchema, templateSchema } from '../../../../shared/gateway/schemas/sms';
import { sharedAnswer } from '../../../../shared/state/executionMemory';
import { catalogueTexts } from './catalogueTexts';
import { skipsNotLeaving } from './leaving';
import type { SendRun } from './sendRun';

/** The signature and template texts an item's checks read (plan.ts): from the node's options, the gateway (free queries, asked once per execution) or the catalogue. */
export interface KnownTexts {
	signature?: string;
	template?: string;
	/** Where the texts came from when both are known (an item's length), said in the spending-cap check. */
	from?: 'options' | 'gateway' | 'catalogue';
	/** Set when the user asked to read the signature and template (their review is then checked too). */
	read?: { signatureStatus?: number | null; templateStatus?: number | null; templateError?: string | null; signatureError?: string | null };
}

/** A free query (signature or template by ID), asked once per execution and credential: the answer is shared by every item. */
async function askOnce<Schema extends typeof signatureSchema>(run: SendRun, operation: 'signatureGet' | 'templateGet', id: number, schema: Schema): Promise<z.output<Schema>> {
	const params = { id: String(id) };
	const load = async (): Promise<z.output<Schema>> => (await run.client.call(operation, params, schema, run.options)).data;
	return await sharedAnswer(run.memory.answers, run.client.questionKey(operation, params), run.runId, load).answer;
}

async function readTexts(run: SendRun, signId: number, templateId: number) {
	return await Promise.all([askOnce(run, 'signatureGet', signId, signatureSchema), askOnce(run, 'templateGet', templateId, templateSchema)]);
}

/**
 * Signature and template text: read from the gateway when asked to, otherwise from the options.
 * With a spending cap and either text unknown they are read too (free queries), so that the cap
 * counts every segment of a long message rather than one per SMS. Otherwise (SMS 1.4) what the
 * catalogue holds fills the output's segments and the bill.
 */
async function knownTexts(run: SendRun, itemIndex: number, signId: number, templateId: number, sendOptions: IDataObject): Promise<KnownTexts> {
	if (sendOptions.readTemplate === true) {
		const [signature, template] = await readTexts(run, signId, templateId);
		return {
			signature: signature.name ?? undefined,
			template: template.content ?? undefined,
			from: 'gateway',
			read: { signatureStatus: signature.status, signatureError: signature.error, templateStatus: template.status, templateError: template.error },
		};
	}
	const given: KnownTexts = {
		signature: (sendOptions.signatureText as string) || undefined,
		template: (sendOptions.templateContent as string) || undefined,
		from: 'options',
	};
	// Refuse Content Warnings checks the message as sent, so it needs the texts as the cap and budgets do.
	const needs = run.meter.limited ? 'the spending cap and budgets need the message length' : sendOptions.refuseContentWarnings === true ? 'Refuse Content Warnings needs the message text' : undefined;
	if (given.signature !== undefined && given.template !== undefined) return given;
	// From SMS 1.5 the forbidden-content check wants the template's text (an approved signature holds no link); unread, it checks what is known (planSend).
	const wanted = needs === undefined && skipsNotLeaving(run.node) && given.template === undefined;
	if (needs === undefined && !wanted) return await fromCatalogue(run, given, signId, templateId);
	try {
		const [signature, template] = await readTexts(run, signId, templateId);
		return { signature: given.signature ?? (signature.name || undefined), template: given.template ?? (template.content || undefined), from: 'gateway' };
	} catch (error) {
		if (wanted) return await fromCatalogue(run, given, signId, templateId);
		throw new NodeOperationError(
			run.ctx.getNode(),
			`Item ${itemIndex + 1}: ${needs}, and the signature ${signId} or template ${templateId} could not be read: ${error instanceof Error ? error.message : String(error)}`,
			{
				description:
					'The message was not sent. Check the Signature ID and Template ID, or give Signature Text and Template Content in Options so the texts are known without reading them.',
				itemIndex,
			},
		);
	}
}

/** Only shown in the output and bill: the catalogue's text may be stale, so money is never counted by it. */
async function fromCatalogue(run: SendRun, given: KnownTexts, signId: number, templateId: number): Promise<KnownTexts> {
	const held = await catalogueTexts(run, signId, templateId);
	// Both known here means at least one is the catalogue's: with both given, knownTexts returned before.
	return { signature: given.signature ?? held.signature, template: given.template ?? held.template, from: 'catalogue' };
}

/** Each run's texts once known, by signature and template, for the options object they were read with. */
const knownOfRun = new WeakMap<SendRun, Map<string, { sendOptions: IDataObject; texts: KnownTexts }>>();

/**
 * The item's texts: once a run knows them for the item's signature, template and options (a node's
 * options without an expression are one object for every item), at once, so that the batch's
 * checks need no turn of the event loop per item (bench section 12); else read (knownTexts).
 */
export function textsOf(run: SendRun, itemIndex: number, signId: number, templateId: number, sendOptions: IDataObject): KnownTexts | Promise<KnownTexts> {
	let known = knownOfRun.get(run);
	if (!known) knownOfRun.set(run, (known = new Map()));
	const key = `${signId}|${templateId}`;
	const kept = known.get(key);
	if (kept?.sendOptions === sendOptions) return kept.texts;
	return knownTexts(run, itemIndex, signId, templateId, sendOptions).then((texts) => {
		known.set(key, { sendOptions, texts });
		return texts;
	});
}
