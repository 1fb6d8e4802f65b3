import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { routeOperation } from '../../shared/router';
import * as copyright from './copyright';
import * as registration from './registration';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, {
		registration: { get: registration.get },
		copyright: { getAll: copyright.getAll },
	});
}
