import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { routeOperation } from '../../shared/n8n/router';
import * as getAll from './copyright/getAll.operation';
import * as get from './registration/get.operation';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, {
		registration: { get },
		copyright: { getAll },
	});
}
