import { NodeOperationError, type IDataObject, type IExecuteFunctions } from 'n8n-workflow';

import { checkMobileNumber } from '../../../../shared/checks/phone';
import type { SendWindow } from '../../../../shared/checks/sendWindow';
import { checkGatewayId, checkVariables, checkVariablesAgainstTemplate, messageSize, renderTemplate } from '../../../../shared/checks/sms';
import { inputError } from '../../../../shared/errors/failures';
import { messageFingerprint } from '../../../../shared/store/sendRecords/rules';
import { REVIEW_STATUS, REVIEW_STATUS_LABELS } from '../../../../shared/gateway/catalog';
import { runKey } from '../../../../shared/state/executionMemory';
import { readTemplateVariables } from '../templateVariables';
import { idValue, isPicked } from '../../catalogue/pickByName';
import { ItemParameters } from '../../../../shared/n8n/parameters';
import { contentRefusalText, refuseOutsideWindow } from './guards';
import { textsOf, type KnownTexts } from './knownTexts';
import { skipsNotLeaving } from './leaving';
import type { SendPlan, SendRun, SentRequest, SmsRequest } from './sendRun';

function readVariables(ctx: IExecuteFunctions, itemIndex: number, parameters: ItemParameters): Record<string, string> {
	const fail = (problem: string) =>
		inputError(ctx.getNode(), itemIndex, 'Variables', problem, 'Give an object of names and text values, e.g. {"code": "1234"}.');
	const input = parameters.get<string>('variablesInput', itemIndex, 'keyValue');
	if (input === 'none') return {};
	if (input === 'template') return readTemplateVariables(ctx, itemIndex);
	if (input === 'json') {
		let value = parameters.get<unknown>('variablesJson', itemIndex, '{}');
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
	const pairs = parameters.get<Array<{ name?: string; value?: unknown }>>('variables.variable', itemIndex, []) ?? [];
	// A Map: names such as `constructor` or `__proto__` are the user's, not an object's built-ins.
	const variables = new Map<string, string>();
	for (const pair of pairs) {
		const name = String(pair.name ?? '').trim();
		if (name === '') throw fail('has a variable without a name');
		if (variables.has(name)) throw fail(`has "${name}" twice`);
		variables.set(name, String(pair.value ?? ''));
	}
	return Object.fromEntries(variables);
}

function readId(ctx: IExecuteFunctions, parameters: ItemParameters, itemIndex: number, name: string, idLabel: string): number {
	const field = parameters.get<unknown>(name, itemIndex, '');
	// From 1.4 a picker ("Signature", "Template") holds the ID.
	const label = isPicked(field) ? idLabel.replace(' ID', '') : idLabel;
	const raw = idValue(field);
	const noun = idLabel.replace(' ID', '');
	const fix = isPicked(field)
		? `Pick an approved ${noun.toLowerCase()} from the list, or enter its numeric ID By ID (${noun} → Import to Catalogue lists ones made elsewhere).`
		: `Enter the numeric ID of an approved ${noun.toLowerCase()}: find it in the gateway console, or with ${noun} → Get.`;
	const checked = checkGatewayId(raw);
	if (checked.problem !== undefined) throw inputError(ctx.getNode(), itemIndex, label, checked.problem, fix);
	return checked.id;
}

/**
 * The item's request from its fields, checked: number, IDs and variables. Preview reads it too. A
 * run's `parameters` reads the fields without an expression once for all its items.
 */
export function readRequest(ctx: IExecuteFunctions, itemIndex: number, parameters = new ItemParameters(ctx)): { request: SmsRequest; variables: Record<string, string> } {
	const unset = (name: string) => ['', '0'].includes(String(idValue(parameters.get<unknown>(name, itemIndex, '')) ?? '').trim());
	if (unset('signId') && unset('templateId')) {
		if (isPicked(parameters.get<unknown>('signId', itemIndex, ''))) {
			throw inputError(ctx.getNode(), itemIndex, 'Signature and Template', 'are both empty or 0', 'Pick an approved signature and template from the lists, or enter their numeric IDs By ID.');
		}
		throw inputError(ctx.getNode(), itemIndex, 'Signature ID and Template ID', 'are both empty or 0', 'Enter the numeric IDs of an approved signature and template: find them in the gateway console, or with Signature → Get and Template → Get.');
	}
	const signId = readId(ctx, parameters, itemIndex, 'signId', 'Signature ID');
	const templateId = readId(ctx, parameters, itemIndex, 'templateId', 'Template ID');
	const phone = checkMobileNumber(parameters.get('phone', itemIndex, ''));
	if (!phone.ok) throw inputError(ctx.getNode(), itemIndex, 'Phone Number', phone.value, 'Enter a mainland mobile number like 13800138000.');
	const variables = readVariables(ctx, itemIndex, parameters);
	const problem = checkVariables(variables);
	if (problem) throw inputError(ctx.getNode(), itemIndex, 'Variables', problem, 'Fix the variable names and values to match the template.');
	// params is left out when there are no variables: the gateway refuses it for templates without any.
	const request: SmsRequest = {
		signId,
		templateId,
		phone: phone.value,
		...(Object.keys(variables).length > 0 ? { params: variables as IDataObject } : {}),
	};
	return { request, variables };
}

/** Which parts of the request differ from the one sent earlier in this run. */
function changedParts(earlier: SmsRequest, now: SmsRequest): string[] {
	const variables = (request: SmsRequest) => JSON.stringify(Object.entries(request.params ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)));
	const changed: string[] = [];
	if (earlier.phone !== now.phone) changed.push('phone');
	if (earlier.signId !== now.signId) changed.push('signId');
	if (earlier.templateId !== now.templateId) changed.push('templateId');
	if (variables(earlier) !== variables(now)) changed.push('variables');
	return changed;
}

export function notApprovedProblem(id: number, status: number | null | undefined, reason: string | null | undefined): string | undefined {
	if (status === undefined || status === null || status === REVIEW_STATUS.approved) return undefined;
	const label = REVIEW_STATUS_LABELS[String(status)] ?? `in status ${status}`;
	return `${id} is ${label}${reason ? ` (${reason})` : ''}; the gateway sends only with an approved one`;
}

/**
 * The content checks (guards.ts reviewSentMessage, once per distinct message: run.contentReviews) on the message as the gateway gets it: from SMS
 * 1.5 its forbidden content is refused by default; with Refuse Content Warnings its warnings too.
 * A template whose text is unknown leaves the variables' values to check: Refuse Content
 * Warnings then refuses, naming the fix, as it cannot check what it was asked to.
 */
function refuseContent(run: SendRun, texts: KnownTexts, variables: Record<string, string>, refuseWarnings: boolean, refuse: (field: string, problem: string, fix: string) => Error): void {
	if (!refuseWarnings && !skipsNotLeaving(run.node)) return;
	if (texts.template === undefined && refuseWarnings) {
		throw refuse('Template Content', 'is unknown: the gateway\'s answer for the template held no text, so Refuse Content Warnings cannot check the message', 'Give the template\'s text in Options > Template Content, or turn Refuse Content Warnings off.');
	}
	const message = texts.template === undefined ? Object.values(variables).join('\n') : renderTemplate(texts.template, variables);
	const review = run.contentReviews.review(texts.signature, message);
	const findings = refuseWarnings ? [...review.refusals, ...review.warnings] : review.refusals;
	if (findings.length === 0) return;
	const { field, problem, fix } = contentRefusalText(findings, refuseWarnings);
	throw refuse(field, problem, fix);
}

/** A Retry On Fail re-run of an item sent earlier in this run: the earlier send stands, whatever the fields give now. */
function planFromEarlier(run: SendRun, itemIndex: number, key: string, earlier: { outcome: Promise<string>; request: unknown }): SendPlan {
	const sent = earlier.request as SentRequest;
	let changed: string[];
	try {
		changed = changedParts(sent.request, readRequest(run.ctx, itemIndex, run.parameters).request);
	} catch {
		changed = ['unreadable'];
	}
	return {
		itemIndex,
		key,
		phone: sent.request.phone,
		params: sent.request,
		message: messageFingerprint({ account: run.client.accountKey, ...sent.request }),
		size: sent.size,
		earlier: { sent, outcome: earlier.outcome, changed },
	};
}

/** What an item's checks read before its texts: its key in the run, request, options and Send Window. */
interface ItemRead {
	itemIndex: number;
	key: string;
	request: SmsRequest;
	variables: Record<string, string>;
	sendOptions: IDataObject;
	window: SendWindow | undefined;
}

/**
 * Reads and checks one item's send, in item order, before anything is paid: its Reference, the
 * number, the variables, and the template's placeholders and approval when known. At once when
 * nothing is to be waited for (no window's clock, texts the run knows), else once it is.
 */
export function planSend(run: SendRun, itemIndex: number): SendPlan | Promise<SendPlan> {
	const { ctx, memory } = run;
	run.deliveries.readReference(itemIndex, run.parameters);
	// Found by node, run index and item: on a retry the expressions may give another request.
	const key = runKey(ctx, itemIndex, 'smsSend', run.node.name);
	const earlier = memory.sends.get(key);
	if (earlier) return planFromEarlier(run, itemIndex, key, earlier);

	const { request, variables } = readRequest(ctx, itemIndex, run.parameters);
	const sendOptions = run.parameters.get<IDataObject>('sendOptions', itemIndex, {});
	const window = refuseOutsideWindow(run, itemIndex, sendOptions);
	const read = (open: SendWindow | undefined): ItemRead => ({ itemIndex, key, request, variables, sendOptions, window: open });
	return window instanceof Promise ? window.then((open) => withTexts(run, read(open))) : withTexts(run, read(window));
}

function withTexts(run: SendRun, item: ItemRead): SendPlan | Promise<SendPlan> {
	const texts = textsOf(run, item.itemIndex, item.request.signId, item.request.templateId, item.sendOptions);
	return texts instanceof Promise ? texts.then((known) => checkedPlan(run, item, known)) : checkedPlan(run, item, texts);
}

/** The checks that need the texts: approval, the template's variables, the content; then the plan. */
function checkedPlan(run: SendRun, item: ItemRead, texts: KnownTexts): SendPlan {
	const { ctx, client } = run;
	const { itemIndex, key, request, variables, sendOptions, window } = item;
	const { signId, templateId } = request;
	const message = messageFingerprint({ account: client.accountKey, ...request });
	const size = texts.signature !== undefined && texts.template !== undefined ? messageSize(texts.signature, renderTemplate(texts.template, variables)) : undefined;

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
	// Template text the user gave or asked to read is checked; one read only for the cap counts length only.
	const templateGiven = texts.read !== undefined || Boolean(sendOptions.templateContent);
	if (texts.template !== undefined && templateGiven) {
		const mismatch = checkVariablesAgainstTemplate(texts.template, variables);
		if (mismatch) throw refuse('Variables', mismatch, `Give exactly the template's variables. The template reads: ${texts.template}`);
	}
	refuseContent(run, texts, variables, sendOptions.refuseContentWarnings === true, refuse);
	return { itemIndex, key, phone: request.phone, params: request, message, size, lengthFrom: size ? texts.from : undefined, window };
}
