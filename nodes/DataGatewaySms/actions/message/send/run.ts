import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { MessageSize } from '../../../../shared/checks/sms';
import { spendMeter, type callOptions } from '../../../../shared/transport/clientForNode';
import { inputError } from '../../../../shared/errors/failures';
import { openSendRecords } from '../../../../shared/store/sendRecords/open';
import type { SmsLimits } from '../../../../shared/store/sendRecords/rules';
import type { SendRecords } from '../../../../shared/store/sendRecords/sendRecords';
import { DEFAULT_SMS_LIMITS } from '../../../../shared/gateway/catalog';
import type { SpendMeter } from '../../../../shared/money/spend';
import { executionMemory, type ExecutionMemory } from '../../../../shared/state/executionMemory';
import type { GatewayClient } from '../../../../shared/transport/gatewayClient';
import { BatchOutcomes } from './outcome';

/**
 * The stages of Send (and Send and Check Delivery), in the order send.operation.ts walks them, one
 * file each: fields.ts (the form), plan.ts reads and checks every item, records.ts reserves the
 * sends (repeats, per-number limits) and checks the spending cap, send.ts sends once per item,
 * outcome.ts releases what never started and names what a failure left behind; poll.ts follows
 * the delivery. This file holds what every stage of one node run reads.
 */

export type CallOptions = ReturnType<typeof callOptions>;

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
	/** Where the texts behind `size` came from: the node's options or the gateway (free queries). */
	lengthFrom?: 'options' | 'gateway';
	/** Set when the item was already sent in this run (Retry On Fail): that send, its outcome, and what differs now. */
	earlier?: { sent: SentRequest; outcome: Promise<string>; changed: string[] };
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
}

/** What every stage reads within one run of the node; each part keeps its own state behind its methods. */
export interface SendRun {
	readonly ctx: IExecuteFunctions;
	readonly client: GatewayClient;
	readonly options: CallOptions;
	/** Sends of this execution, found again by Retry On Fail. */
	readonly memory: ExecutionMemory;
	/** Sends across executions, in the durable store: each item reserved, then started, sent or released. */
	readonly records: SendRecords;
	/** 0 when the repeat check across executions is off. */
	readonly repeatWindowMinutes: number;
	readonly meter: SpendMeter;
	/** What this try sent or left unknown, for the error that stops a batch. */
	readonly outcomes: BatchOutcomes;
}

export async function startSendRun(ctx: IExecuteFunctions, client: GatewayClient, options: CallOptions): Promise<SendRun> {
	const window = repeatWindowMinutes(ctx);
	return {
		ctx,
		client,
		options,
		memory: executionMemory(ctx),
		records: await openSendRecords(ctx, { limits: smsLimits(ctx), repeatWindowMinutes: window }),
		repeatWindowMinutes: window,
		meter: spendMeter(ctx, client),
		outcomes: new BatchOutcomes(window),
	};
}

function repeatWindowMinutes(ctx: IExecuteFunctions): number {
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
