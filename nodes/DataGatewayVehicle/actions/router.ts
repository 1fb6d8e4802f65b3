import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { routeOperation } from '../../shared/n8n/router';
import * as getDetail from './vehicle/getDetail.operation';
import * as getSupportRules from './violation/getSupportRules.operation';
import * as query from './violation/query.operation';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, {
		violation: { getSupportRules, query },
		vehicle: { getDetail },
	});
}
