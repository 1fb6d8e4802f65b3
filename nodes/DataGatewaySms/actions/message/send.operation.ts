import type { IExecuteFunctions, INodeExecutionData, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { runForEachItem } from '../../../shared/n8n/batch';
import { referenceFields } from './reference';
import { sendFields } from './send/fields';
import { finishSends, settle } from './send/finish';
import { refuseOptedOutThenReserve } from './send/guards';
import { planSend } from './send/plan';
import { reserveSends } from './send/reserve';
import { presentSend, sendItem } from './send/send';
import { openSendRun } from './send/sendRun';
import type { BillKind } from '../../../shared/money/bill';

/** Counted in the run's bill hint. */
export const bill: BillKind = 'sms';

/** This operation's entry in the Operation dropdown; message/index.ts lists the entries in the order people use them. */
export const option: INodePropertyOptions = {
	name: 'Send',
	value: 'send',
	description: 'Send an SMS with an approved signature and template (paid per delivered message)',
	action: 'Send an SMS',
};

export const description: INodeProperties[] = [...sendFields(['send', 'sendAndCheck']), ...referenceFields(['send', 'sendAndCheck'])];

/**
 * Sends one SMS per item and run, and outputs its task ID. Never twice under Retry On Fail (the
 * execution's memory and the send records); not again by a retried execution only while Repeat
 * Window > 0 (with 0 a retried execution sends every message again). The steps, in order: plan
 * (read and check each item), reserve (send records and spending cap), send (the paid call), finish.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const run = await openSendRun(this);
	const batch = runForEachItem(this, {
		concurrency: run.client.settings.limiter.maxConcurrent,
		plan: (itemIndex) => planSend(run, itemIndex),
		beforeCalls: async (plans) => await refuseOptedOutThenReserve(run, plans, async (rest) => await reserveSends(run, rest)),
		execute: async (plan) => await sendItem(run, plan),
		output: (outcome, _plan, itemIndex) => presentSend(run, outcome, itemIndex),
	});
	return await finishSends(run, await settle(batch));
}
