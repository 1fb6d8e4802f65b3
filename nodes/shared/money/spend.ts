import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import { executionMemory, type ExecutionMemory } from '../state/executionMemory';
import { OPERATIONS, PRICES_YUAN, type OperationName } from '../gateway/catalog';

/** The price of one successful call (docs/gateway-api.md#prices); 0 for free ones (support rules, queries, status, telephone within its quota). */
export function priceOf(operation: OperationName): number {
	if (operation === 'smsSend') return PRICES_YUAN.smsSegment;
	return (PRICES_YUAN as Record<string, number>)[operation] ?? 0;
}

/**
 * What one attempt of a call may be billed: the price of a paid lookup. An SMS is billed per
 * delivered segment, which the send path counts itself (before it sends), so its attempts count 0 here.
 */
export function attemptPrice(operation: OperationName): number {
	return operation === 'smsSend' ? 0 : priceOf(operation);
}

export const roundYuan = (yuan: number): number => Math.round(yuan * 10000) / 10000;

export const CAP_FIELD = '"Max Spend per Execution (Yuan)" in the credential';

/**
 * Money spent with one credential in one execution, against the credential's cap (0 = none).
 * Every node of the execution adds to the same total.
 */
export class SpendMeter {
	private readonly memory: ExecutionMemory;

	constructor(
		private readonly ctx: IExecuteFunctions,
		/** The credential's account (GatewayClient.accountKey), without the appCode. */
		private readonly account: string,
		readonly capYuan: number,
	) {
		this.memory = executionMemory(ctx);
	}

	get spentYuan(): number {
		return this.memory.spentYuan.get(this.account) ?? 0;
	}

	add(yuan: number): void {
		if (yuan > 0) this.memory.spentYuan.set(this.account, roundYuan(this.spentYuan + yuan));
	}

	/** Takes back what add() counted for a call that was not billed after all. */
	refund(yuan: number): void {
		if (yuan > 0) this.memory.spentYuan.set(this.account, Math.max(0, roundYuan(this.spentYuan - yuan)));
	}

	/**
	 * Before the first paid call of a node: the error that stops the node when what this execution
	 * already spent plus this node's estimate would pass the cap. `what` says what the estimate counts.
	 */
	overCap(estimateYuan: number, what: string): NodeOperationError | undefined {
		if (this.capYuan <= 0 || estimateYuan <= 0) return undefined;
		const total = roundYuan(this.spentYuan + estimateYuan);
		if (total <= this.capYuan + 1e-9) return undefined;
		return new NodeOperationError(
			this.ctx.getNode(),
			`Spending cap: this node's paid calls are estimated at ${roundYuan(estimateYuan)} yuan (${what}); with ${this.spentYuan} yuan already spent in this execution with this credential that is ${total} yuan, above the cap of ${this.capYuan} yuan`,
			{ description: `No paid call was made by this node. Raise ${CAP_FIELD}, or give the node fewer items.` },
		);
	}

	checkEstimate(estimateYuan: number, what: string): void {
		const error = this.overCap(estimateYuan, what);
		if (error) throw error;
	}

	/**
	 * Before one attempt of a call (the transport asks, attempt by attempt): counts what the gateway
	 * may bill for it, whatever becomes of its answer, or says why it may not be made. The transport
	 * gives it back (refund) only when the gateway certainly did not bill the attempt.
	 */
	reserveAttempt(operation: OperationName): { yuan: number; refusal?: undefined } | { refusal: string } {
		const yuan = attemptPrice(operation);
		if (yuan <= 0) return { yuan: 0 };
		const total = roundYuan(this.spentYuan + yuan);
		if (this.capYuan > 0 && total > this.capYuan + 1e-9) {
			return {
				refusal: `Spending cap: ${yuan} yuan more would bring this execution's spend with this credential to ${total} yuan, above the cap of ${this.capYuan} yuan`,
			};
		}
		this.add(yuan);
		return { yuan };
	}

	/** Before one more paid call of a listing that counts its pages as they come. */
	checkNextCall(priceYuan: number, doneSoFar: string): void {
		if (this.capYuan <= 0) return;
		const total = roundYuan(this.spentYuan + priceYuan);
		if (total <= this.capYuan + 1e-9) return;
		throw new NodeOperationError(
			this.ctx.getNode(),
			`Spending cap: the next paid call (${priceYuan} yuan) would bring this execution's spend with this credential to ${total} yuan, above the cap of ${this.capYuan} yuan; stopped after ${doneSoFar}`,
			{ description: `Raise ${CAP_FIELD}, or use a Limit instead of Return All.` },
		);
	}
}

/** "3 × Get Vehicle Detail at 1.2 yuan" */
export function describeCalls(count: number, operation: OperationName): string {
	return `${count} × ${OPERATIONS[operation].label} at ${priceOf(operation)} yuan`;
}
