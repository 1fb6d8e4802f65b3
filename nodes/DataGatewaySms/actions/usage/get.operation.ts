import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../../../shared/gateway/account';
import { inputError } from '../../../shared/errors/failures';
import { telephonePlanOf } from '../../../shared/lookups/telephoneQuota';
import type { BillKind } from '../../../shared/money/bill';
import { runForEachItem } from '../../../shared/n8n/batch';
import { readmeLink } from '../../../shared/n8n/readmeLink';
import { openGuardScope } from '../../../shared/store/guardScope';
import { openDurableStore } from '../../../shared/store/openStore';
import { openDeliveryStore } from '../../../shared/store/sendsByTask';
import { settingsFromCredentials } from '../../../shared/transport/settings';
import { gatewayClient } from '../../../shared/transport/clientForNode';
import { checkPastDay, USAGE_DAYS_KEPT, usageReport, type UsageStores } from '../../../shared/usage/report';

/** Free: reads the store, calls no gateway. */
export const bill: BillKind = 'none';

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['usage'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: "Spend, budgets, calls, reuse and SMS of the credential's account today and this month, China time (free, no gateway call)",
				action: 'Get usage of the account',
			},
		],
		default: 'get',
	},
	{
		displayName: 'Past Day (China Time)',
		name: 'pastDay',
		type: 'string',
		default: '',
		placeholder: 'e.g. 2026-11-24',
		description: `Also the counts of this day, kept ${USAGE_DAYS_KEPT} days. Empty: today and this month only. ${readmeLink('usage-counts', 'More')}`,
		displayOptions: { show: { resource: ['usage'], operation: ['get'] } },
	},
];

/** A past day as the user gave it: a date, or the date part of a date and time. */
function pastDayOf(ctx: IExecuteFunctions, itemIndex: number): string | undefined {
	const given = String(ctx.getNodeParameter('pastDay', itemIndex, '') ?? '').trim();
	return given === '' ? undefined : (/^\d{4}-\d{2}-\d{2}/.exec(given)?.[0] ?? given);
}

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	const credentials = await this.getCredentials(CREDENTIAL_TYPE);
	const { money } = settingsFromCredentials(credentials);
	const telephone = telephonePlanOf(credentials);
	const stores: UsageStores = { store: await openDurableStore(this), deliveryStore: await openDeliveryStore(this) };
	// Read only: Usage → Get refuses nothing and writes no scope of its own.
	const guard = await openGuardScope(stores.store, client.guard, undefined);
	const now = await stores.store.now();
	return await runForEachItem<string | undefined, IDataObject>(this, {
		concurrency: 1,
		plan: (itemIndex) => {
			const pastDay = pastDayOf(this, itemIndex);
			const problem = pastDay === undefined ? undefined : checkPastDay(pastDay, now);
			if (problem) throw inputError(this.getNode(), itemIndex, 'Past Day (China Time)', problem, `Enter a day of the last ${USAGE_DAYS_KEPT} days like 2026-11-24, or leave it empty.`);
			return pastDay;
		},
		execute: async (pastDay) => await usageReport(stores, { guard, limits: money, telephone, pastDay }),
		output: (report) => report,
	});
}
