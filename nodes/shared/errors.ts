import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { INode, JsonObject } from 'n8n-workflow';

import { redactKnownSecrets } from './redact';
import { OPERATIONS, type OperationName } from './spec';

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

/** Masks the appCodes in the texts n8n shows and stores for an item's error. */
function redactNodeError<T extends NodeApiError | NodeOperationError>(error: T): T {
	error.message = redactKnownSecrets(error.message);
	if (typeof error.description === 'string') error.description = redactKnownSecrets(error.description);
	for (const [key, value] of Object.entries(error.context)) {
		if (typeof value === 'string') error.context[key] = redactKnownSecrets(value);
	}
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
