import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { inputError } from '../../../shared/errors/failures';
import type { ItemParameters } from '../../../shared/n8n/parameters';
import type { DurableStore } from '../../../shared/store/durableStore';
import { markReported, openDeliveryStore, MAX_REFERENCE_CHARS, recordSends, type SendToLog } from '../../../shared/store/sendsByTask';
import { readmeLink } from '../../../shared/n8n/readmeLink';

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** From SMS 1.5 Reference is an option (Records), so the default form fits without scrolling; saved nodes keep the field. */
export const REFERENCE_IN_OPTIONS_VERSION = 1.5;

const referenceField: INodeProperties = {
	displayName: 'Reference',
	name: 'reference',
	type: 'string',
	default: '',
	placeholder: 'e.g. {{ $json.orderId }}',
	description: `Your own text for this message, such as an order number or a small JSON (up to ${MAX_REFERENCE_CHARS} characters). The SMS Trigger outputs it with the message's delivery report, and Check Pending Deliveries with its final status.`,
	hint: `Kept with the task ID for 72 hours in the package's store. ${readmeLink('delivery-reports-tied-to-their-send', 'Where')}`,
};

/** The Reference field of Send and Send and Check Delivery, in nodes saved before 1.5. */
export function referenceFields(operations: string[]): INodeProperties[] {
	return [{ ...referenceField, displayOptions: { show: { resource: ['message'], operation: operations, '@version': [{ _cnd: { lt: REFERENCE_IN_OPTIONS_VERSION } }] } } }];
}

/** Reference as Send's option (Records), from 1.5. */
export const referenceOption: INodeProperties = {
	...referenceField,
	displayName: 'Records: Reference',
	description: `Your own text for this message, e.g. an order number (up to ${MAX_REFERENCE_CHARS} characters), output again with its delivery report`,
	displayOptions: { show: { '@version': [{ _cnd: { gte: REFERENCE_IN_OPTIONS_VERSION } }] } },
};

/**
 * Sends recorded together: each record rewrites the minute's index of task IDs (sendsByTask.ts), so
 * one update per send cost a transaction and that index's text each (bench section 12). A report
 * that reaches the SMS Trigger before its send is recorded starts its workflow without the send's
 * fields (the record then keeps that it was reported: sendsByTask.ts), hence deliveryRecordTiming.
 */
const RECORDS_PER_SAVE = 50;
/**
 * How long a send waits at most for its group (a batch paced by a rate cap fills 50 slowly), so that
 * its record is there before its delivery report, which comes seconds later. Undefined (tests): only
 * full groups and the end of the sends save.
 */
export const deliveryRecordTiming: { waitMs: number | undefined } = { waitMs: 200 };

/**
 * The sends of one node run, recorded by task ID for their delivery reports: each item's Reference
 * is read and checked with the item's other fields (before any send), and the task IDs are
 * recorded RECORDS_PER_SAVE at a time as their sends return, the rest when the sends end. A send
 * that could not be recorded is still sent and output: the run's hint says what is missing.
 */
export class DeliveryLog {
	private readonly references = new Map<number, string>();
	private readonly waiting: SendToLog[] = [];
	private saving: Promise<void> | undefined;
	private store: DurableStore | undefined;
	private recorded = 0;
	private failed = 0;
	private recordFailure: string | undefined;
	private markFailure: string | undefined;
	/** The Reference field's name in this node's version; read once (n8n's getNode() copies the node at every call). */
	private readonly referenceField: string;

	constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly account: string,
		/** The account's scope: each record names it, so that a delivery report counts under it (usage/deliveries.ts). */
		private readonly scope: string,
		/** How long a send's record is kept: at least as long as the repeat window that still counts its message as sent. */
		private readonly keepMs: number,
	) {
		this.referenceField = ctx.getNode().typeVersion >= REFERENCE_IN_OPTIONS_VERSION ? 'sendOptions.reference' : 'reference';
	}

	/** Reads item `itemIndex`'s Reference (through the run's `parameters` when given); throws an input error naming the fix when it is too long. */
	readReference(itemIndex: number, parameters?: ItemParameters): void {
		const name = this.referenceField;
		const value = parameters ? parameters.get<unknown>(name, itemIndex, '') : (this.ctx.getNodeParameter(name, itemIndex, '') as unknown);
		const reference = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
		if (reference.length > MAX_REFERENCE_CHARS) {
			throw inputError(this.ctx.getNode(), itemIndex, 'Reference', `is ${reference.length} characters long; at most ${MAX_REFERENCE_CHARS} are kept`, 'Use a short key, such as an order number, and look the rest up when the report arrives.');
		}
		if (reference !== '') this.references.set(itemIndex, reference);
	}

	/** What the item's output adds: its reference, when it has one. */
	outputOf(itemIndex: number): IDataObject {
		const reference = this.references.get(itemIndex);
		return reference === undefined ? {} : { reference };
	}

	/** Records a send that got a task ID, with the number it texted (what erasing that number finds); hands back `outcome` unchanged. */
	sent<T extends { taskId: string | null }>(itemIndex: number, outcome: T, phone?: string): T {
		if (outcome.taskId) {
			this.waiting.push({
				phone,
				taskId: outcome.taskId,
				reference: this.references.get(itemIndex) ?? null,
				...this.runIds(),
				scope: this.scope,
			});
			// A store update per RECORDS_PER_SAVE sends, not one each; the rest after at most waitMs, or when the sends end (saved()).
			if (this.waiting.length >= RECORDS_PER_SAVE) this.saving ??= this.saveWaiting();
			else if (!this.flushSoon && deliveryRecordTiming.waitMs !== undefined) {
				this.flushSoon = true;
				void sleep(deliveryRecordTiming.waitMs).then(() => {
					this.flushSoon = false;
					if (this.waiting.length > 0) this.saving ??= this.saveWaiting(1);
				});
			}
		}
		return outcome;
	}

	private flushSoon = false;
	private ids?: { workflowId: string; executionId: string };
	/** The workflow and execution, read once per run. */
	private runIds(): { workflowId: string; executionId: string } {
		this.ids ??= { workflowId: String(this.ctx.getWorkflow().id ?? ''), executionId: String(this.ctx.getExecutionId?.() ?? '') };
		return this.ids;
	}

	/** After the node's sends, succeeded or not: waits for their records and says in the run's hints what the records could not do. */
	async finish(): Promise<void> {
		await this.saved();
		this.addHints();
	}

	/** Records every send noted so far, and waits until they are recorded (or failed to be). */
	async saved(): Promise<void> {
		while (this.saving || this.waiting.length > 0) await (this.saving ??= this.saveWaiting(1));
	}

	/** Send and Check Delivery saw these tasks' final status itself: Check Pending Deliveries need not list them. */
	async markFinal(reports: Array<{ taskId: string; status: number }>): Promise<void> {
		if (reports.length === 0) return;
		try {
			await markReported(await this.openStore(), reports, 'sendAndCheck', this.account);
		} catch (error) {
			this.markFailure ??= reasonOf(error);
		}
	}

	private async openStore(): Promise<DurableStore> {
		this.store ??= await openDeliveryStore(this.ctx);
		return this.store;
	}

	/** Records what waits, while at least `least` sends wait. */
	private async saveWaiting(least = RECORDS_PER_SAVE): Promise<void> {
		try {
			while (this.waiting.length >= least) {
				const sends = this.waiting.splice(0);
				try {
					await recordSends(await this.openStore(), this.account, sends, this.keepMs);
					this.recorded += sends.length;
				} catch (error) {
					this.failed += sends.length;
					this.recordFailure ??= reasonOf(error);
				}
			}
		} finally {
			this.saving = undefined;
		}
	}

	private addHints() {
		const hint = (message: string, type: 'info' | 'warning') => {
			try {
				this.ctx.addExecutionHints?.({ message, type, location: 'outputPane' });
			} catch {
				// A hint must never fail a run whose messages went out.
			}
		};
		if (this.failed > 0) {
			hint(
				`Delivery tracking: ${this.failed} sent SMS could not be recorded${this.store ? ` in ${this.store.label}` : ''} (${this.recordFailure}). They were sent; their delivery reports reach the SMS Trigger without their reference, and Check Pending Deliveries does not list them.`,
				'warning',
			);
		}
		if (this.markFailure) {
			hint(`Delivery tracking: the final statuses seen here could not be marked (${this.markFailure}); Check Pending Deliveries may list these messages again.`, 'warning');
		}
		if (this.store?.kind === 'memory' && this.references.size > 0 && this.recorded > 0) {
			hint(
				`References are kept in ${this.store.label}: an SMS Trigger in another n8n process (queue mode's webhook processes) or after a restart cannot see them. Give n8n a shared store (docs/durable-store.md) to tie every report to its send.`,
				'warning',
			);
		}
	}
}
