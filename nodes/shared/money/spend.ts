import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import { OPERATIONS, PRICES_YUAN, type OperationName } from '../gateway/catalog';
import type { GuardAccount } from '../gateway/accountScope';
import type { DurableStore } from '../store/durableStore';
import { openGuardScope } from '../store/guardScope';
import { SpendLedger, toUnits, type LedgerPeriod, type LedgerSpent, type MoneyLimits, type Reservation } from './ledger';
import { attemptRefusal, budgetLine, estimateRefusal, refusalFix } from './refusals';
import { noteRefused } from '../usage/notes';

export { CAP_FIELD } from './refusals';

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

/** One attempt counted (given back by `giveBack` when the gateway certainly did not bill it), or refused with why and what to change. */
export type AttemptReservation = { yuan: number; refusal?: undefined; giveBack: () => Promise<void> } | { refusal: string; hint: string };

const nothingToGiveBack = async () => undefined;

/**
 * Money spent with one credential's account: in this execution against the cap, today and this
 * month (China time) against the budgets; 0 = none. Counted in the durable store (money/ledger.ts),
 * where every node, execution and process sees it. Without any limit nothing is counted there.
 *
 * To keep round trips few, a node reserves its whole estimate at once before its first paid call
 * (reserveEstimate); its attempts take from that reserve without asking the store, and settle()
 * gives back what was not spent. An attempt beyond the reserve (a retry) reserves its own price.
 * A run that dies in between leaves its reserve counted: the safe side.
 */
export class SpendMeter {
	private ledger?: Promise<SpendLedger>;
	/** Units reserved in the store by an estimate and not yet taken, counted in `poolPeriod`. */
	private pool = 0;
	private poolPeriod?: LedgerPeriod;
	/** What the ledger said last, for the bill's budget line. */
	private latest?: LedgerSpent;

	constructor(
		private readonly ctx: IExecuteFunctions,
		/** The credential's account (GatewayClient.guard), without the appCode. */
		private readonly account: GuardAccount,
		readonly limits: MoneyLimits,
		private readonly openStore: () => Promise<DurableStore>,
	) {}

	get capYuan(): number {
		return this.limits.capYuan;
	}

	/** Whether any limit is set, and so whether anything is counted. */
	get limited(): boolean {
		return this.limits.capYuan > 0 || this.limits.dailyYuan > 0 || this.limits.monthlyYuan > 0;
	}

	private async reserve(units: number, force = false): Promise<Reservation> {
		// Budgets outlive n8n, so process memory may not count them (the cap, per execution, it may).
		const need = this.limits.dailyYuan > 0 || this.limits.monthlyYuan > 0 ? 'budget' : undefined;
		this.ledger ??= this.openStore()
			.then(async (store) => await openGuardScope(store, this.account, need))
			.then((guard) => new SpendLedger(guard, this.ctx.getExecutionId?.() || `unscoped-${Date.now()}-${Math.random()}`, this.limits));
		const ledger = await this.ledger;
		const reservation = await ledger.reserve(units, { force });
		this.latest = reservation.spent;
		return reservation;
	}

	private async giveBack(units: number, period: LedgerPeriod): Promise<void> {
		if (units <= 0 || !this.ledger) return;
		try {
			this.latest = await (await this.ledger).refund(units, period);
		} catch {
			// Not given back: it stays counted, the safe side.
		}
	}

	/**
	 * Before the first paid call of a node: reserves the node's estimate, or the error that stops
	 * the node (the cap; with `whole`, a budget too; the store failing). A budget the estimate would
	 * pass otherwise leaves each attempt to reserve its own price, so that what fits is still made.
	 * `what` says what the estimate counts; `calls` how many calls a refusal refuses (Usage → Get counts them).
	 */
	async reserveEstimate(estimateYuan: number, what: string, { whole = false, calls = 1 } = {}): Promise<NodeOperationError | undefined> {
		if (!this.limited || estimateYuan <= 0) return undefined;
		const units = toUnits(estimateYuan);
		let reservation: Reservation;
		try {
			reservation = await this.reserve(units);
		} catch (error) {
			return new NodeOperationError(this.ctx.getNode(), `Not sent: ${storeFailure(error)}`, {
				description: 'No paid call was made by this node: without the store its spend cannot be counted. Fix the store named, or set the cap and budgets of the credential to 0.',
			});
		}
		if (reservation.ok) {
			this.addToPool(units, reservation.period);
			return undefined;
		}
		if (reservation.limit !== 'cap' && !whole) return undefined;
		noteRefused(this.ctx, reservation.limit, calls);
		return new NodeOperationError(this.ctx.getNode(), estimateRefusal(estimateYuan, what, reservation), {
			description: `No paid call was made by this node. ${refusalFix(reservation.limit)}`,
		});
	}

	async checkEstimate(estimateYuan: number, what: string, calls = 1): Promise<void> {
		const error = await this.reserveEstimate(estimateYuan, what, { calls });
		if (error) throw error;
	}

	/**
	 * Before one attempt of a call (the transport asks, attempt by attempt): counts what the gateway
	 * may bill for it, whatever becomes of its answer, or says why it may not be made. The transport
	 * calls giveBack only when the gateway certainly did not bill the attempt.
	 */
	async reserveAttempt(operation: OperationName): Promise<AttemptReservation> {
		const yuan = attemptPrice(operation);
		// Stryker disable next-line ConditionalExpression,EqualityOperator: a price of 0 takes 0 from the reserve (always enough) and gives 0 back: the same answer, no store asked
		if (yuan <= 0 || !this.limited) return { yuan: 0, giveBack: nothingToGiveBack };
		const units = toUnits(yuan);
		if (this.pool >= units) {
			this.pool -= units;
			return { yuan, giveBack: async () => void (this.pool += units) };
		}
		let reservation: Reservation;
		try {
			reservation = await this.reserve(units);
		} catch (error) {
			return { refusal: storeFailure(error), hint: 'Fix the store named, or set the cap and budgets of the credential to 0.' };
		}
		if (!reservation.ok) {
			noteRefused(this.ctx, reservation.limit);
			return { refusal: attemptRefusal(yuan, reservation), hint: refusalFix(reservation.limit) };
		}
		return { yuan, giveBack: async () => await this.giveBack(units, reservation.period) };
	}

	/** Before one more paid call of a listing that counts its pages as they come: reserves its price, or stops the node. */
	async checkNextCall(priceYuan: number, doneSoFar: string): Promise<void> {
		const units = toUnits(priceYuan);
		if (!this.limited || this.pool >= units) return;
		let reservation: Reservation;
		try {
			reservation = await this.reserve(units);
		} catch (error) {
			throw new NodeOperationError(this.ctx.getNode(), `Not sent: ${storeFailure(error)}; stopped after ${doneSoFar}`, { description: 'Fix the store named, or set the cap and budgets of the credential to 0.' });
		}
		if (!reservation.ok) {
			throw new NodeOperationError(this.ctx.getNode(), `${attemptRefusal(priceYuan, reservation, `the next paid call (${priceYuan} yuan)`)}; stopped after ${doneSoFar}`, {
				description: refusalFix(reservation.limit, 'use a Limit instead of Return All'),
			});
		}
		this.addToPool(units, reservation.period);
	}

	/** An SMS that went out (or may have): takes its cost from the node's reserve, else counts it at once, limits or not (it may be billed). */
	async spend(yuan: number): Promise<void> {
		const units = toUnits(yuan);
		// Stryker disable next-line ConditionalExpression,EqualityOperator: 0 units come from the reserve (always enough): nothing changes either way
		if (!this.limited || units <= 0) return;
		if (this.pool >= units) {
			this.pool -= units;
			return;
		}
		await this.reserve(units, true).catch(() => undefined);
	}

	/** The node's end: gives back what its reserve did not spend; returns the budget line for its bill. */
	async settle(): Promise<string | undefined> {
		const units = this.pool;
		this.pool = 0;
		// Stryker disable next-line ConditionalExpression: without a period nothing was reserved, so there are 0 units, which giveBack ignores
		if (this.poolPeriod) await this.giveBack(units, this.poolPeriod);
		return this.latest && budgetLine(this.limits, this.latest);
	}

	private addToPool(units: number, period: LedgerPeriod): void {
		// A reserve from another day is given back there first: each period gets back what it counted.
		if (this.poolPeriod && this.poolPeriod.day !== period.day && this.pool > 0) void this.giveBack(this.pool, this.poolPeriod).catch(() => undefined);
		if (this.poolPeriod?.day !== period.day) this.pool = 0;
		this.pool += units;
		this.poolPeriod = period;
	}
}

const storeFailure = (error: unknown) => `the spending cap and budgets could not be counted: ${error instanceof Error ? error.message : String(error)}`;

/** "3 × Get Vehicle Detail at 1.2 yuan" */
export function describeCalls(count: number, operation: OperationName): string {
	return `${count} × ${OPERATIONS[operation].label} at ${priceOf(operation)} yuan`;
}
