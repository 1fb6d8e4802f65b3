import { NodeOperationError, type IDataObject, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { namingItemOnce } from '../errors/failures';
import { addBillHint, isErrorItem, type BillKind } from '../money/bill';
import { countRunUsage } from '../usage/runUsage';

export interface OperationModule {
	execute(this: IExecuteFunctions): Promise<INodeExecutionData[]>;
	/** What the run's bill hint counts; operations without one are free. */
	bill?: BillKind;
}

/** Runs the operation picked in the node's Resource and Operation dropdowns, then shows the run's bill. */
export async function routeOperation(
	ctx: IExecuteFunctions,
	operations: Record<string, Record<string, OperationModule>>,
): Promise<INodeExecutionData[][]> {
	// A node with one resource (Telephone) has no Resource dropdown.
	const resource = ctx.getNodeParameter('resource', 0, Object.keys(operations)[0]) as string;
	const operation = ctx.getNodeParameter('operation', 0) as string;
	const module = operations[resource]?.[operation];
	if (!module) {
		throw new NodeOperationError(ctx.getNode(), `The operation "${operation}" of resource "${resource}" is not supported`);
	}
	let items: INodeExecutionData[];
	try {
		items = await module.execute.call(ctx);
	} catch (error) {
		// Calls made and refusals met before the failure still count for Usage → Get.
		await countRunUsage(ctx, module.bill ?? 'free', []);
		throw namingItemOnce(error, ctx.getInputData().length);
	}
	await countRunUsage(ctx, module.bill ?? 'free', items);
	addBillHint(ctx, module.bill ?? 'free', items);
	return [withIdentifyingInput(ctx, items)];
}

/**
 * The fields that name an item: the number texted or identified, the plate, the company keyword,
 * the task or the signature/template ID. Whichever of them the operation shows is copied onto the
 * item's error item, so a step after it needs no lookup through pairedItem.
 */
export const IDENTIFYING_PARAMETERS = ['phone', 'phoneNumber', 'carNumber', 'keyword', 'taskId', 'id'] as const;

/**
 * Adds the identifying input beside `error` on the error items of "Continue (regular output)".
 * Under "Continue (using error output)" n8n decides: older versions' items carry
 * `INodeExecutionData.error`, whose json n8n (1.123 and 2.41, normalizeNodeErrors) replaces by
 * `{ error: message }`; newer versions' items (errorItems.ts errorItem) reach the error output only while
 * their json holds nothing but `error`, `message` and `details`, and n8n lays the whole input item beneath them.
 */
function withIdentifyingInput(ctx: IExecuteFunctions, items: INodeExecutionData[]): INodeExecutionData[] {
	if (ctx.getNode().onError === 'continueErrorOutput') return items;
	const shown = IDENTIFYING_PARAMETERS.filter((name) => name in ctx.getNode().parameters);
	const named = (item: INodeExecutionData) => item.error === undefined && isErrorItem(item);
	if (shown.length === 0 || !items.some(named)) return items;
	return items.map((item, index) => {
		if (!named(item)) return item;
		const paired = Array.isArray(item.pairedItem) ? item.pairedItem[0] : item.pairedItem;
		const itemIndex = typeof paired === 'number' ? paired : (paired?.item ?? index);
		const input: IDataObject = {};
		for (const name of shown) {
			try {
				input[name] = ctx.getNodeParameter(name, itemIndex) as IDataObject[string];
			} catch {
				// An expression that fails for this item: the error already says so.
			}
		}
		return { ...item, json: { ...input, ...item.json } };
	});
}
