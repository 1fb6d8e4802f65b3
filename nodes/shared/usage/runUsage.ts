/**
 * A node run's usage counts, derived from what its bill already holds (money/bill.ts): the calls
 * the tally counted, the items the run output, the refusals and skips noted on the way. Added to
 * the store once, at the end of the run (router.ts), in one atomic update.
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { lookupTally, smsTally, type BillKind } from '../money/bill';
import { toUnits } from '../money/ledger';
import { priceOf } from '../money/spend';
import type { GuardAccount } from '../gateway/accountScope';
import { openGuardScope } from '../store/guardScope';
import { openDurableStore } from '../store/openStore';
import { addUsage, isEmpty, sumCounts, type UsageCounts } from './counts';
import { runNotes } from './notes';

const prefixed = (prefix: string, counts: Record<string, number>): UsageCounts =>
	Object.fromEntries(Object.entries(counts).map(([name, count]) => [`${prefix}${name}`, count]));

/** The counts of one run of an operation with bill `kind` that output `items` (none when it failed whole). */
export function runUsage(ctx: IExecuteFunctions, kind: BillKind, items: INodeExecutionData[]): UsageCounts {
	const notes = runNotes(ctx);
	const noted = sumCounts(prefixed('refused.', notes.refused), prefixed('sms.skipped.', notes.skipped));
	if (kind === 'sms') {
		const sms = smsTally(items);
		return sumCounts(noted, { 'calls.smsSend': sms.sent, 'sms.sent': sms.sent, 'sms.segments': sms.segments, spentUnits: toUnits(sms.yuan), 'sms.skipped.repeat': sms.repeats, 'sms.skipped.optedOut': sms.optedOut, 'sms.skipped.outsideWindow': sms.pastWindow });
	}
	if (kind === 'smsPreview' || kind === 'free' || kind === 'freeQueries' || kind === 'none') return noted;
	const lookup = lookupTally(ctx, kind, items);
	const price = toUnits(priceOf(kind));
	return sumCounts(noted, { [`calls.${kind}`]: lookup.calls, spentUnits: lookup.calls * price, reused: lookup.earlier, savedUnits: lookup.earlier * price });
}

/** The accounts the runs of this process made clients for, by run: who the run's counts belong to. */
const accounts = new WeakMap<IExecuteFunctions, GuardAccount>();

/** Names the account a run's usage is counted for (transport/clientForNode.ts, when it makes the run's client). */
export function setRunAccount(ctx: IExecuteFunctions, account: GuardAccount): void {
	accounts.set(ctx, account);
}

/**
 * Adds the run's counts to its account's day and month: one store update, none when there is
 * nothing to count. They go under the account's scope, as the budgets do, so a rotated App Code or
 * a retyped Base URL keeps the day's counts (Usage → Get adds the scopes linked to it). A store that
 * fails costs the counts, never the run: a warning says so.
 */
export async function countRunUsage(ctx: IExecuteFunctions, kind: BillKind, items: INodeExecutionData[]): Promise<void> {
	const account = accounts.get(ctx);
	if (account === undefined) return;
	const counts = runUsage(ctx, kind, items);
	if (isEmpty(counts)) return;
	try {
		const store = await openDurableStore(ctx);
		// Opening the scope links it to the credential (resolved once per run): what a later App Code reads as former.
		const { scope } = await openGuardScope(store, account, undefined);
		await addUsage(store, [{ account: scope, counts }]);
	} catch (error) {
		if (typeof ctx.addExecutionHints !== 'function') return;
		const reason = error instanceof Error ? error.message : String(error);
		ctx.addExecutionHints({ message: `This run's usage was not counted (Usage → Get will not show it): ${reason}`, type: 'warning', location: 'outputPane' });
	}
}
