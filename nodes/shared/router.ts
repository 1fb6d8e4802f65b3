import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

export interface OperationModule {
	execute(this: IExecuteFunctions): Promise<INodeExecutionData[]>;
}

/** Runs the operation picked in the node's Resource and Operation dropdowns. */
export async function routeOperation(
	ctx: IExecuteFunctions,
	operations: Record<string, Record<string, OperationModule>>,
): Promise<INodeExecutionData[][]> {
	const resource = ctx.getNodeParameter('resource', 0) as string;
	const operation = ctx.getNodeParameter('operation', 0) as string;
	const module = operations[resource]?.[operation];
	if (!module) {
		throw new NodeOperationError(ctx.getNode(), `The operation "${operation}" of resource "${resource}" is not supported`);
	}
	return [await module.execute.call(ctx)];
}
