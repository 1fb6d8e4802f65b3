import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { addBillHint, type BillKind } from '../money/bill';

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
	const items = await module.execute.call(ctx);
	addBillHint(ctx, module.bill ?? 'free', items);
	return [items];
}
