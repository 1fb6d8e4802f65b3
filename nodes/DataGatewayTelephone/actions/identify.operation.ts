import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runForEachItem } from '../../shared/n8n/batch';
import { ItemParameters } from '../../shared/n8n/parameters';
import { callOptions, gatewayClient } from '../../shared/transport/clientForNode';
import { checkTelephoneNumber } from '../../shared/checks/phone';
import { inputError } from '../../shared/errors/failures';
import { telephoneIdentitySchema, type TelephoneIdentity } from '../../shared/gateway/schemas/telephone';
import { flagFromIszhapian, htmlToText, toCount } from '../../shared/output/convert';
import { countedCall } from '../../shared/money/bill';
import { simplifyProperties, usesFriendlyNames } from '../../shared/n8n/description';
import { friendlyTelephone } from '../../shared/output/friendly';
import type { BillKind } from '../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'telephoneIdentify';

export const description: INodeProperties[] = [
	{
		displayName: 'Phone Number',
		name: 'phoneNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: '13800138000 or 010-12345678',
		description:
			'A mainland mobile number (11 digits), or a landline with its area code. Spaces and dashes are removed, and a +86 or 0086 prefix too (a landline then gets back the 0 of its area code, e.g. +86 10 12345678 becomes 01012345678).',
	},
	...simplifyProperties(),
];

/** Smoothed output: a boolean flag, plain-text description and a numeric report count. */
export function simplifyIdentity(identity: TelephoneIdentity): IDataObject {
	return {
		...identity,
		isFlagged: flagFromIszhapian(identity.iszhapian),
		rpt_cnt: toCount(identity.rpt_cnt),
		countDescText: htmlToText(identity.countDesc),
	} as IDataObject;
}

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const parameters = new ItemParameters(this);
	const options = callOptions(this);
	const friendly = usesFriendlyNames(this);
	return await runForEachItem(this, {
		concurrency: client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => {
			const input = parameters.get('phoneNumber', itemIndex, '') as string;
			const phone = checkTelephoneNumber(input);
			if (!phone.ok) {
				throw inputError(this.getNode(), itemIndex, 'Phone Number', phone.value, 'Enter a mobile number like 13800138000 or a landline with area code like 010-12345678.');
			}
			return { tel: phone.value, simplify: parameters.get('simplify', itemIndex, friendly) as boolean };
		},
		shareKey: (plan) => client.questionKey('telephoneIdentify', { tel: plan.tel }),
		shareAcrossExecution: true,
		execute: async (plan) => await countedCall(this, async () => (await client.call('telephoneIdentify', { tel: plan.tel }, telephoneIdentitySchema, options)).data),
		// Free within the daily quota: version 1.1's simplified record still says so in costYuan.
		output: (identity, plan) => (plan.simplify ? (friendly ? friendlyTelephone(identity) : simplifyIdentity(identity)) : (identity as IDataObject)),
	});
}
