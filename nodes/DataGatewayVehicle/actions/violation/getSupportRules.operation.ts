import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { countedCall } from '../../../shared/money/bill';
import { ItemParameters } from '../../../shared/n8n/parameters';
import { checkPlatePrefix } from '../../../shared/checks/vehicle';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import { inputError } from '../../../shared/errors/failures';
import { supportRulesSchema } from '../../../shared/gateway/schemas/vehicle';
import type { BillKind } from '../../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'violationSupport';

const showFor = { resource: ['violation'], operation: ['getSupportRules'] };

export const description: INodeProperties[] = [
	{
		displayName: 'Plate Prefix',
		name: 'preCarNum',
		type: 'string',
		default: '',
		placeholder: '京',
		description:
			'Plate prefix to look up, e.g. 粤B. For municipalities (Beijing, Shanghai, Tianjin, Chongqing) only the first character. Leave empty for all.',
		displayOptions: { show: showFor },
	},
	{
		displayName: 'Province',
		name: 'province',
		type: 'string',
		default: '',
		placeholder: '广东',
		description: 'Province name to look up. Leave empty for all.',
		displayOptions: { show: showFor },
	},
];

/** Free: one output item per rule, telling which engine and frame number tails a region needs. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const parameters = new ItemParameters(this);
	const options = callOptions(this);
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => {
			const prefix = checkPlatePrefix(parameters.get('preCarNum', itemIndex, '') as string);
			if (!prefix.ok) {
				throw inputError(this.getNode(), itemIndex, 'Plate Prefix', prefix.value, 'Enter the first character of the plate (e.g. 京), optionally with its letter (e.g. 粤B), or leave it empty.');
			}
			return { preCarNum: prefix.value, province: String(parameters.get('province', itemIndex, '')).trim() };
		},
		shareKey: (params) => client.questionKey('violationSupport', params),
		execute: async (params) => await countedCall(this, async () => (await client.call('violationSupport', params, supportRulesSchema, options)).data),
		output: (rules) => rules as IDataObject[],
	});
}
