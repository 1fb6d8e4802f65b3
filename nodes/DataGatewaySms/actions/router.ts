import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { routeOperation } from '../../shared/router';
import * as message from './message';
import * as signature from './signature';
import * as template from './template';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, {
		message: { send: message.send, sendAndCheck: message.sendAndCheck, getStatus: message.getStatus },
		signature: { create: signature.create, get: signature.get, update: signature.update, delete: signature.delete },
		template: { create: template.create, get: template.get, update: template.update, delete: template.delete },
	});
}
