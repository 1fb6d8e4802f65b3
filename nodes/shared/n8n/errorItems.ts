/** How a failed input item leaves the node: as n8n's error, or under Continue On Fail as an error item. */
import { NodeOperationError, type IDataObject, type IExecuteFunctions, type INode, type INodeExecutionData, type NodeApiError } from 'n8n-workflow';

import { asNodeError } from '../errors/failures';
import { errorItemsKeepInput } from './description';

export type ItemError = NodeApiError | NodeOperationError;

/** How failed items leave under Continue On Fail: see errorItem. */
export type ErrorItemForm = 'regular' | 'errorOutput' | 'errorOutputWithInput';

export function errorItemForm(ctx: IExecuteFunctions): ErrorItemForm {
	if (errorItemsKeepInput(ctx.getNode())) return 'errorOutputWithInput';
	return ctx.getNode().onError === 'continueErrorOutput' ? 'errorOutput' : 'regular';
}

/**
 * A failed item under Continue On Fail. Under "Continue (using error output)" it carries `error`
 * (as n8n's own nodes set it), which sends it to the error output; n8n then shows the error's
 * message, description and context, and replaces the json by the message alone. From the versions
 * in ERROR_ITEMS_KEEP_INPUT_FROM it carries no `error` and its json only `error` and `message` (the
 * fix): n8n routes such an item to the error output and lays the input item's json beneath it, so
 * the error branch keeps the phone, plate or keyword. Under "Continue (regular output)" it carries
 * no `error`, for n8n would replace the json: the readable fields stay. The error is redacted by asNodeError.
 */
export function errorItem(error: ItemError, itemIndex: number, form: ErrorItemForm): INodeExecutionData {
	const pairedItem = { item: itemIndex };
	// What a next step needs beyond the words (Send Window's opensAt for a Wait node): `details` is the one other key n8n's error output allows.
	const details = error.context.details as IDataObject | undefined;
	if (form === 'errorOutputWithInput') {
		return { json: { error: error.message, ...(error.description ? { message: error.description } : {}), ...(details ? { details } : {}) }, pairedItem };
	}
	const json: IDataObject = { error: error.message };
	if (error.description) json.errorDescription = error.description;
	if (details) json.details = details;
	const gatewayCode = error.context.gatewayCode;
	if (gatewayCode !== undefined) json.gatewayCode = gatewayCode;
	return form === 'errorOutput' ? { json, error, pairedItem } : { json, pairedItem };
}

/**
 * A refusal of the whole node before any call (spending cap, send records) as one waiting item's
 * own error, naming that item: under Continue On Fail every waiting item gets it.
 */
export function wholeNodeRefusal(node: INode, error: unknown, itemIndex: number): NodeOperationError {
	const description = (error as { description?: unknown }).description;
	return new NodeOperationError(node, error instanceof Error ? error.message : String(error), {
		description: typeof description === 'string' ? description : undefined,
		itemIndex,
	});
}

/** Any error of one item, as the node error n8n shows (redacted, naming the item). */
export const asItemError = (node: INode, error: unknown, itemIndex: number): ItemError => asNodeError(node, error, itemIndex);
