import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { inputError } from '../../../shared/errors/failures';
import { redactSecret } from '../../../shared/errors/redact';
import { smsTaskSchema, type SmsTask } from '../../../shared/gateway/schemas/sms';
import { countedCall, type BillKind } from '../../../shared/money/bill';
import { runForEachItem } from '../../../shared/n8n/batch';
import { readmeLink } from '../../../shared/n8n/readmeLink';
import type { DurableStore } from '../../../shared/store/durableStore';
import { isFinalStatus, KEEP_SENDS_MS, listPendingSends, markChecked, markReported, openDeliveryStore, type SendRecord } from '../../../shared/store/sendsByTask';
import { callOptions, gatewayClient } from '../../../shared/transport/clientForNode';
import type { GatewayClient } from '../../../shared/transport/gatewayClient';
import { presentTask } from '../../../shared/output/smsObjects';
import { chinaItemTime } from '../../../DataGatewaySmsTrigger/listening';

/** Free status queries, counted in the run's bill hint. */
export const bill: BillKind = 'smsStatus';

const show = { resource: ['message'], operation: ['checkPendingDeliveries'] };
const MAX_HOURS = KEEP_SENDS_MS / 3_600_000;

/** This operation's entry in the Operation dropdown; message/index.ts lists the entries in the order people use them. */
export const option: INodePropertyOptions = {
	name: 'Check Pending Deliveries',
	value: 'checkPendingDeliveries',
	description: 'Find sent messages whose delivery report never reached an SMS Trigger and output the final ones (free queries)',
	action: 'Check pending deliveries',
};

export const description: INodeProperties[] = [
	{
		displayName: `Outputs sent messages whose final report reached no SMS Trigger, as the trigger would. Put it on a schedule to catch up after n8n was down. ${readmeLink('delivery-reports-tied-to-their-send', 'More')}`,
		name: 'checkPendingNotice',
		type: 'notice',
		default: '',
		displayOptions: { show },
	},
	{
		displayName: 'Sent Within (Hours)',
		name: 'sentWithinHours',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: MAX_HOURS },
		default: 24,
		description: `Check messages sent this many hours back at most (up to ${MAX_HOURS}, as long as sends are kept)`,
		displayOptions: { show },
	},
	{
		displayName: 'Options',
		name: 'checkOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show },
		options: [
			{
				displayName: 'Max Messages per Run',
				name: 'maxTasks',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 500,
				description: 'The most messages to ask about in one run, those asked about least recently first; the rest wait for the next run. Each is one free status query, within the credential\'s rate limit.',
			},
			{
				displayName: 'Skip Messages Younger Than (Minutes)',
				name: 'minAgeMinutes',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 5,
				description: 'Whose report may still be on its way to the SMS Trigger: left for a later run, so a report is not handled twice',
			},
		],
	},
];

interface CheckPlan {
	sinceMs: number;
	minAgeMs: number;
	maxTasks: number;
}

function readPlan(ctx: IExecuteFunctions, itemIndex: number): CheckPlan {
	const hours = Number(ctx.getNodeParameter('sentWithinHours', itemIndex, 24));
	if (!Number.isFinite(hours) || hours <= 0 || hours > MAX_HOURS) {
		throw inputError(ctx.getNode(), itemIndex, 'Sent Within (Hours)', `"${hours}" is not a number of hours from 1 to ${MAX_HOURS}`, `Enter 24, or up to ${MAX_HOURS}: older sends are no longer kept.`);
	}
	const options = ctx.getNodeParameter('checkOptions', itemIndex, {}) as IDataObject;
	const maxTasks = Number(options.maxTasks ?? 500);
	if (!Number.isInteger(maxTasks) || maxTasks < 1) {
		throw inputError(ctx.getNode(), itemIndex, 'Max Messages per Run', `"${options.maxTasks}" is not a whole number of 1 or more`, 'Enter 500, or fewer for shorter runs.');
	}
	const minAge = Number(options.minAgeMinutes ?? 5);
	if (!Number.isFinite(minAge) || minAge < 0) {
		throw inputError(ctx.getNode(), itemIndex, 'Skip Messages Younger Than (Minutes)', `"${options.minAgeMinutes}" is not a number of 0 or more`, 'Enter 5, or 0 to check every message.');
	}
	return { sinceMs: hours * 3_600_000, minAgeMs: minAge * 60_000, maxTasks };
}

/**
 * From version 1.4 the item's own dates are China time with its zone, as the SMS Trigger (1.2) and
 * the gateway's dates in the report write them; saved nodes keep UTC.
 */
export const CHINA_TIME_DATES_VERSION = 1.4;

/** The item a caught-up report becomes: the SMS Trigger's report item, marked as found by this check. */
function reportItem(task: SmsTask, record: SendRecord, chinaTime: boolean): IDataObject {
	const time = (instant: Date) => (chinaTime ? chinaItemTime(instant) : instant.toISOString());
	return {
		event: 'report',
		action: 'report',
		report: presentTask(task),
		reference: record.reference ?? null,
		sendWorkflowId: record.workflowId ?? null,
		sendExecutionId: record.executionId ?? null,
		sentAt: record.sentAt === undefined ? null : time(new Date(record.sentAt)),
		caughtUp: true,
		receivedAt: time(new Date()),
	};
}

interface CheckTally {
	pending: number;
	final: number;
	stillSending: number;
	failed: number;
	firstFailure?: string;
	more: number;
}

/** Asks for each pending send's status (free, through the credential's limiter), claims the final ones and outputs them. */
async function checkPending(ctx: IExecuteFunctions, client: GatewayClient, store: DurableStore, plan: CheckPlan, tallies: CheckTally[]): Promise<IDataObject[]> {
	const now = await store.now();
	const { sends, more } = await listPendingSends(store, client.accountKey, now - plan.sinceMs, now - plan.minAgeMs, plan.maxTasks);
	const tally: CheckTally = { pending: sends.length, final: 0, stillSending: 0, failed: 0, more };
	tallies.push(tally);
	const options = callOptions(ctx);
	const finals: Array<{ task: SmsTask; record: SendRecord }> = [];
	const stillPending: string[] = [];
	const errors: unknown[] = [];
	let next = 0;
	const worker = async () => {
		while (next < sends.length) {
			const record = sends[next++];
			try {
				const task = (await countedCall(ctx, async () => await client.call('smsStatus', { id: record.taskId }, smsTaskSchema, options))).data;
				if (isFinalStatus(task.status)) finals.push({ task, record });
				else {
					tally.stillSending++;
					stillPending.push(record.taskId);
				}
			} catch (error) {
				errors.push(error);
				tally.failed++;
				stillPending.push(record.taskId);
			}
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(client.settings.limiter.maxConcurrent, sends.length)) }, worker));
	if (errors.length > 0) tally.firstFailure = redactSecret(errors[0] instanceof Error ? errors[0].message : String(errors[0]), client.settings.appCode);
	// Every query failed: the gateway or the credential is the problem, so the item fails and says so.
	if (errors.length === sends.length && sends.length > 0) throw errors[0];

	// Asked about and still pending: to the back of the queue, so the next run asks about the others first.
	await markChecked(store, client.accountKey, stillPending);
	// Claimed in one update: a report that reached a trigger meanwhile, or another run's check, is not output twice.
	const claimed = await markReported(store, finals.map(({ task, record }) => ({ taskId: record.taskId, status: task.status as number })), 'checkPending', client.accountKey);
	const output = finals.filter(({ record }) => claimed.get(record.taskId)?.first).sort((a, b) => (a.record.sentAt ?? 0) - (b.record.sentAt ?? 0));
	tally.final = output.length;
	const chinaTime = ctx.getNode().typeVersion >= CHINA_TIME_DATES_VERSION;
	return output.map(({ task, record }) => reportItem(task, record, chinaTime));
}

function addHints(ctx: IExecuteFunctions, store: DurableStore | undefined, tallies: CheckTally[]) {
	const sum = (key: 'pending' | 'final' | 'stillSending' | 'failed' | 'more') => tallies.reduce((total, tally) => total + tally[key], 0);
	const messages = (count: number) => `${count} sent message${count === 1 ? '' : 's'}`;
	const parts = [`${messages(sum('pending'))} without a final report: ${sum('final')} final now (output), ${sum('stillSending')} still sending`];
	if (sum('failed') > 0) parts.push(`${sum('failed')} could not be checked and stay pending (${tallies.find((tally) => tally.firstFailure)?.firstFailure})`);
	if (sum('more') > 0) parts.push(`${sum('more')} more wait for the next run (Max Messages per Run)`);
	const hints = [{ message: `Check Pending Deliveries: ${parts.join('; ')}.`, type: sum('failed') > 0 ? ('warning' as const) : ('info' as const) }];
	if (store?.kind === 'memory') {
		hints.push({ message: `Sends are kept in ${store.label}: only messages sent by this n8n process since it started are checked. Give n8n a shared store (docs/durable-store.md).`, type: 'warning' });
	}
	try {
		ctx.addExecutionHints?.(...hints.map((hint) => ({ ...hint, location: 'outputPane' as const })));
	} catch {
		// A hint must never fail the run.
	}
}

/**
 * Check Pending Deliveries: the catch-up for delivery reports the SMS Trigger missed (the gateway
 * pushes each report once; docs/gateway-api.md, Callbacks). Each input item runs one check; an item with
 * nothing final yet outputs nothing.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const client = await gatewayClient(this);
	let store: DurableStore | undefined;
	const tallies: CheckTally[] = [];
	const items = await runForEachItem(this, {
		// One item at a time: each claims what it outputs, so the next finds only what is left.
		concurrency: 1,
		plan: (itemIndex) => readPlan(this, itemIndex),
		execute: async (plan) => {
			store ??= await openDeliveryStore(this);
			return await checkPending(this, client, store, plan, tallies);
		},
		output: (reports) => reports,
	});
	addHints(this, store, tallies);
	return items;
}
