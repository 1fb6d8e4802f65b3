import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { routeOperation } from '../../shared/n8n/router';
import * as checkPendingDeliveries from './message/checkPending.operation';
import * as getStatus from './message/getStatus.operation';
import * as preview from './message/preview.operation';
import * as send from './message/send.operation';
import * as sendAndCheck from './message/sendAndCheck.operation';
import * as optOut from './optOut';
import * as createSignature from './signature/create.operation';
import * as deleteSignature from './signature/delete.operation';
import * as getSignature from './signature/get.operation';
import * as importSignatures from './signature/import.operation';
import * as updateSignature from './signature/update.operation';
import * as createTemplate from './template/create.operation';
import * as deleteTemplate from './template/delete.operation';
import * as getTemplate from './template/get.operation';
import * as importTemplates from './template/import.operation';
import * as updateTemplate from './template/update.operation';
import * as usage from './usage';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, {
		message: { send, sendAndCheck, getStatus, checkPendingDeliveries, preview },
		optOut: { add: optOut.add, check: optOut.check, remove: optOut.remove },
		signature: { create: createSignature, get: getSignature, import: importSignatures, update: updateSignature, delete: deleteSignature },
		template: { create: createTemplate, get: getTemplate, import: importTemplates, update: updateTemplate, delete: deleteTemplate },
		usage: { get: usage.get },
	});
}
