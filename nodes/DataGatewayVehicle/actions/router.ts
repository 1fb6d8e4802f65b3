import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { routeOperation } from '../../shared/router';
import * as vehicle from './vehicle';
import * as violation from './violation';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, {
		violation: { getSupportRules: violation.getSupportRules, query: violation.query },
		vehicle: { getDetail: vehicle.getDetail },
	});
}
