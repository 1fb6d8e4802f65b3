import type { IDataObject, IExecuteFunctions, INode } from 'n8n-workflow';

import type { MessageSize } from '../../../../shared/checks/sms';
import { callOptions, gatewayClient, spendMeter } from '../../../../shared/transport/clientForNode';
import { inputError } from '../../../../shared/errors/failures';
import { ItemParameters } from '../../../../shared/n8n/parameters';
import { openSendRecords } from '../../../../shared/store/sendRecords/open';
import { KEEP_SENDS_MS } from '../../../../shared/store/sendsByTask';
import type { SendDecision, SmsLimits } from '../../../../shared/store/sendRecords/rules';
import type { SendRecords } from '../../../../shared/store/sendRecords/sendRecords';
import { DEFAULT_SMS_LIMITS } from '../../../../shared/gateway/catalog';
import type { SpendMeter } from '../../../../shared/money/spend';
import { executionMemory, runIdOf, type ExecutionMemory } from '../../../../shared/state/executionMemory';
import type { GatewayClient } from '../../../../shared/transport/gatewayClient';
import { DeliveryLog } from '../reference';
import type { SendWindow } from '../../../../shared/checks/sendWindow';
import { ContentReviews, openOptOuts } from './guards';
import type { NotLeaving } from './leaving';
import type { GuardScope } from '../../../../shared/store/guardScope';
import { BatchOutcomes } from './outcomes';

/**
 * What every step of one run of Send (and Send and Check Delivery) reads, and its opening. The
 * steps, in the order the operations call them, one file each: plan.ts reads and checks each item
 * (the signature and template texts it checks with: knownTexts.ts);
 * reserve.ts takes the send records (repeats, per-number limits) and checks the spending cap;
 * send.ts sends once per item (noting in outcomes.ts what went out); finish.ts marks what was
 * sent, releases what never started and names what a failure left behind. Send and Check Delivery
 * keeps each item's end (deliveryCheck.ts) and follows the tasks (poll.ts). Their errors:
 * ../../sendErrors.ts.
 */

/** The request of one item's send, as the gateway gets it. */
export type SmsRequest = {
	signId: number;
	templateId: number;
	phone: string;
	params?: IDataObject;
};

/** What one item's send was: kept in the execution's memory so a Retry On Fail re-run finds it. */
export interface SentRequest {
	request: SmsRequest;
	size?: MessageSize;
}

export interface SendPlan {
	itemIndex: number;
	/** Names this item's send within the run: node, run index and item, not the request. */
	key: string;
	phone: string;
	params: SmsRequest;
	/** The message, for the repeat window across executions. */
	message: string;
	/** Known when both the signature and the template text are known. */
	size?: MessageSize;
	/** Where the texts behind `size` came from: the node's options, the gateway (free queries), or the catalogue (SMS 1.4, never for the cap). */
	lengthFrom?: 'options' | 'gateway' | 'catalogue';
	/** Set when the item was already sent in this run (Retry On Fail): that send, its outcome, and what differs now. */
	earlier?: { sent: SentRequest; outcome: Promise<string>; changed: string[] };
	/** Send and Check Delivery only: how the item's delivery is followed. */
	polling?: Polling;
	/** The item's Send Window, checked again as the message leaves (leaving.ts). */
	window?: SendWindow;
}

export interface SendOutcome extends Partial<MessageSize> {
	taskId: string | null;
	phone: string;
	signId: number;
	templateId: number;
	/** True when this item was already sent earlier in this run (Retry On Fail) and was not sent again. */
	deduplicated: boolean;
	/** True when another execution of this node sent the same message within the repeat window. */
	skippedAsRepeat: boolean;
	/** What the send costs when delivered: segments × price when the text is known, else one message. */
	costYuan: number;
	/** On a deduplicated item whose expressions gave another request on the retry: the earlier request was kept. */
	requestChangedOnRetry?: boolean;
	/** Which parts differ: phone, signId, templateId, variables. */
	changedOnRetry?: string[];
	/** Present only when the records are in this process's memory (no store that outlives it). */
	sendRecords?: string;
	/** SMS 1.5: the message was not sent, for this reason (leaving.ts). */
	notLeaving?: NotLeaving;
}

/** How Send and Check Delivery follows one item's delivery (poll.ts reads it). */
export interface Polling {
	intervalMs: number;
	timeoutMs: number;
}

/** What every step reads within one run of the node; each part keeps its own state behind its methods. */
export interface SendRun {
	readonly ctx: IExecuteFunctions;
	/** The node, read once: n8n's getNode() deep-copies it at every call. */
	readonly node: INode;
	/** The node's fields: those without an expression are read once for every item. */
	readonly parameters: ItemParameters;
	readonly client: GatewayClient;
	readonly options: ReturnType<typeof callOptions>;
	/** Sends of this execution, found again by Retry On Fail. */
	readonly memory: ExecutionMemory;
	/** Names this run of the node in the execution's memory (runIdOf), read once. */
	readonly runId: string;
	/** Sends across executions, in the durable store: each item reserved, then started, sent or released. Holds the repeat window. */
	readonly records: SendRecords;
	/** What the records decided for each item (reserve.ts), read by the send (send.ts). */
	readonly decisions: Map<number, SendDecision>;
	/** SMS 1.5: items found before the batch not to send (an opted-out number), read by the send (send.ts). */
	readonly notLeaving: Map<number, NotLeaving>;
	/** The account's opt-out list, opened by the first read before the batch (guards.ts), then read in each claim (leaving.ts). */
	readonly optOuts: () => Promise<GuardScope>;
	readonly meter: SpendMeter;
	/** What this try sent or left unknown, for the error that stops a batch. */
	readonly outcomes: BatchOutcomes;
	/** The task IDs with each item's Reference, for the delivery reports. */
	readonly deliveries: DeliveryLog;
	/** The content checks' reviews, the last one reused for the same message (guards.ts). */
	readonly contentReviews: ContentReviews;
}

/** Opens one run of Send or Send and Check Delivery: the credential's client, the options read once, the records. */
export async function openSendRun(ctx: IExecuteFunctions): Promise<SendRun> {
	const client = await gatewayClient(ctx);
	const repeatWindowMinutes = readRepeatWindow(ctx);
	const records = await openSendRecords(ctx, { limits: smsLimits(ctx), repeatWindowMinutes });
	let opened: Promise<GuardScope> | undefined;
	const optOuts = async () => await (opened ??= openOptOuts(ctx.getNode(), records.store, client.guard));
	return {
		ctx,
		node: ctx.getNode(),
		parameters: new ItemParameters(ctx),
		client,
		options: callOptions(ctx),
		memory: executionMemory(ctx),
		runId: runIdOf(ctx),
		records,
		decisions: new Map(),
		notLeaving: new Map(),
		optOuts,
		meter: spendMeter(ctx, client),
		outcomes: new BatchOutcomes(),
		deliveries: new DeliveryLog(ctx, client.accountKey, client.guard.scope, Math.max(KEEP_SENDS_MS, records.repeatWindowMinutes * 60_000)),
		contentReviews: new ContentReviews(),
	};
}

function readRepeatWindow(ctx: IExecuteFunctions): number {
	const sendOptions = ctx.getNodeParameter('sendOptions', 0, {}) as IDataObject;
	const window = Number(sendOptions.repeatWindowMinutes ?? 10);
	if (!Number.isFinite(window) || window < 0) {
		throw inputError(ctx.getNode(), 0, 'Repeat Window (Minutes)', `"${sendOptions.repeatWindowMinutes}" is not a number of 0 or more`, 'Set it to 10, or 0 to turn the repeat check off.');
	}
	return window;
}

const LIMIT_LABELS: Record<keyof SmsLimits, string> = {
	perMinute: 'Max per Number per Minute',
	perHour: 'Max per Number per Hour',
	perDay: 'Max per Number per Day',
};

/** The per-number limits: a node-wide option, read once. */
export function smsLimits(ctx: IExecuteFunctions): SmsLimits {
	const options = ctx.getNodeParameter('sendOptions', 0, {}) as IDataObject;
	const limits = { ...DEFAULT_SMS_LIMITS } as SmsLimits;
	for (const limit of Object.keys(LIMIT_LABELS) as Array<keyof SmsLimits>) {
		if (options[limit] === undefined) continue;
		const value = Number(options[limit]);
		if (!Number.isInteger(value) || value < 1) {
			throw inputError(ctx.getNode(), 0, LIMIT_LABELS[limit], `"${options[limit]}" is not a whole number of 1 or more`, `Set it to the limit your gateway account has (the default is ${DEFAULT_SMS_LIMITS[limit]}).`);
		}
		limits[limit] = value;
	}
	return limits;
}
