import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INode, JsonObject } from 'n8n-workflow';

import { redactKnownSecrets } from './redact';
import { OPERATIONS, type OperationName } from '../gateway/catalog';

/** Why a gateway call failed; decides the message, the hint and whether a retry may help. */
export type GatewayFailureKind =
	| 'gateway-code' // HTTP 200 with code != 0
	| 'http-status' // non-2xx answer
	| 'not-json' // HTML page, malformed or truncated body
	| 'schema' // JSON that does not fit the operation's response shape
	| 'network' // connection refused, reset, DNS
	| 'timeout'
	| 'cancelled' // after the request was written: it may have reached the gateway
	| 'not-sent' // failed before the request was written (limiter, shared limit, cancellation): certainly not sent
	| 'outcome-unknown'; // a non-idempotent call whose request may have reached the gateway

/**
 * A failed gateway call, independent of any item: one call can answer several deduplicated items,
 * so the item index is attached only when it becomes a node error. Its texts are already redacted.
 */
export class GatewayFailure extends Error {
	readonly kind: GatewayFailureKind;
	readonly operation: OperationName;
	readonly gatewayCode?: number;
	readonly httpStatus?: number;
	readonly retryAfterMs?: number;
	readonly hint?: string;

	constructor(options: {
		kind: GatewayFailureKind;
		operation: OperationName;
		message: string;
		gatewayCode?: number;
		httpStatus?: number;
		retryAfterMs?: number;
		hint?: string;
	}) {
		super(options.message);
		this.name = 'GatewayFailure';
		this.kind = options.kind;
		this.operation = options.operation;
		this.gatewayCode = options.gatewayCode;
		this.httpStatus = options.httpStatus;
		this.retryAfterMs = options.retryAfterMs;
		this.hint = options.hint;
	}

	get operationLabel(): string {
		return OPERATIONS[this.operation].label;
	}
}

/**
 * The gateway answered code 0 (success, so billed) with data that does not fit the schema. The
 * call took effect: its spend counts and it is kept like a good answer, and the item outputs the
 * data as sent with a warning instead of failing. `data` is already redacted.
 */
export class MisshapenAnswer extends GatewayFailure {
	readonly data: unknown;
	readonly gatewayMessage: string;
	/** Where the answer did not fit, e.g. `data.vin: expected text, received object`. */
	readonly problem: string;

	constructor(options: { operation: OperationName; problem: string; data: unknown; gatewayMessage: string; hint?: string }) {
		super({ kind: 'schema', operation: options.operation, message: `the answer does not have the expected shape: ${options.problem}`, hint: options.hint });
		this.name = 'MisshapenAnswer';
		this.data = options.data;
		this.gatewayMessage = options.gatewayMessage;
		this.problem = options.problem;
	}

	/** The output item of an item whose answer this is: the warning, and the data as the gateway sent it. */
	toOutput(): IDataObject {
		return {
			warning: `${this.operationLabel}: the gateway answered with code 0, so the call took effect (and is billed if the operation is paid), but ${this.message}. The data is output as the gateway sent it, under "data"; it is not asked (or paid) again in this execution.`,
			warningField: this.problem.split(':')[0],
			gatewayMessage: this.gatewayMessage,
			data: this.data as IDataObject,
		};
	}
}

/** Turns a gateway failure into the error n8n shows for one item. Carries no raw cause or stack. */
export function toNodeApiError(node: INode, failure: GatewayFailure, itemIndex: number): NodeApiError {
	const response: JsonObject = {
		operation: failure.operationLabel,
		kind: failure.kind,
		message: failure.message,
	};
	if (failure.gatewayCode !== undefined) response.gatewayCode = failure.gatewayCode;
	if (failure.httpStatus !== undefined) response.httpStatus = failure.httpStatus;

	const prefix =
		failure.kind === 'gateway-code'
			? `${failure.operationLabel} failed: gateway code ${failure.gatewayCode}`
			: `${failure.operationLabel} failed`;
	const error = new NodeApiError(node, response, {
		message: `${prefix}: ${failure.message}`,
		description: failure.hint,
		httpCode: failure.httpStatus !== undefined ? String(failure.httpStatus) : undefined,
		itemIndex,
	});
	// NodeApiError swaps in generic texts for known HTTP codes; keep ours, which name the operation.
	error.message = `${prefix}: ${failure.message}`;
	error.description = failure.hint ?? null;
	// Kept where error items can read it, so workflows can branch on the gateway's code.
	if (failure.gatewayCode !== undefined) error.context.gatewayCode = failure.gatewayCode;
	return error;
}

/** Masks the appCodes in every text of a value n8n may store: strings, arrays and plain objects, a few levels deep. */
function redactValue(value: unknown, depth = 0): unknown {
	if (typeof value === 'string') return redactKnownSecrets(value);
	if (depth > 4 || typeof value !== 'object' || value === null) return value;
	if (Array.isArray(value)) return value.map((entry) => redactValue(entry, depth + 1));
	const object = value as Record<string, unknown>;
	for (const key of Object.getOwnPropertyNames(object)) {
		const descriptor = Object.getOwnPropertyDescriptor(object, key);
		if (descriptor?.writable) object[key] = redactValue(object[key], depth + 1);
	}
	return object;
}

/**
 * Masks the appCodes in the texts n8n shows and stores for an item's error: the error rides on
 * the item (INodeExecutionData.error) into the stored execution, with its stack, context, cause
 * and messages.
 */
function redactNodeError<T extends NodeApiError | NodeOperationError>(error: T): T {
	error.message = redactKnownSecrets(error.message);
	if (typeof error.description === 'string') error.description = redactKnownSecrets(error.description);
	redactValue(error.context);
	if (Array.isArray(error.messages)) error.messages = error.messages.map((text) => (typeof text === 'string' ? redactKnownSecrets(text) : text));
	if (error.cause !== undefined) error.cause = redactValue(error.cause) as Error;
	if (typeof error.stack === 'string') error.stack = redactKnownSecrets(error.stack);
	return error;
}

/**
 * Any error of one item as the node error n8n shows: gateway failures keep their operation and
 * code. Every text is redacted here as well, whatever made it.
 */
export function asNodeError(node: INode, error: unknown, itemIndex: number): NodeApiError | NodeOperationError {
	if (error instanceof GatewayFailure) return redactNodeError(toNodeApiError(node, error, itemIndex));
	if (error instanceof NodeApiError || error instanceof NodeOperationError) {
		error.context.itemIndex ??= itemIndex;
		return redactNodeError(error);
	}
	return redactNodeError(new NodeOperationError(node, error instanceof Error ? error.message : String(error), { itemIndex }));
}

/** A local input check that failed: names the item and the field, and says how to fix it. */
export function inputError(node: INode, itemIndex: number, field: string, problem: string, fix: string) {
	return new NodeOperationError(node, `Item ${itemIndex + 1}: ${field} ${problem}`, {
		description: `${fix} No call was made to the gateway for this item.`,
		itemIndex,
	});
}

/**
 * The error that stops a node, as n8n's editor shows it. The editor appends " [item N]", counted
 * from 0, when the node had several input items and the error has `context.itemIndex`, unless the
 * message already contains "item N" (NodeErrorView, n8n 2.41). Our messages count items from 1
 * ("Item 2: …", as continue-on-fail items read), so the stopping error names its item there, once,
 * and leaves n8n's index out. Continue-on-fail items keep theirs: they are built before this.
 */
export function namingItemOnce<T>(error: T, inputItems: number): T {
	if (!(error instanceof NodeApiError || error instanceof NodeOperationError)) return error;
	const index = error.context.itemIndex;
	if (typeof index !== 'number') return error;
	const named = new RegExp(`^Item ${index + 1}\\b`).test(error.message);
	// With one input item the editor adds nothing and there is no other item to tell it from.
	if (!named && inputItems < 2) return error;
	if (!named) error.message = `Item ${index + 1}: ${error.message}`;
	delete error.context.itemIndex;
	return error;
}
