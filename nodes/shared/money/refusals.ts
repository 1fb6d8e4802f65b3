/** The words of the spending cap's and the budgets' refusals, and the bill's budget line. */
import type { LedgerPeriod, LedgerSpent, LimitName, MoneyLimits } from './ledger';
import { toYuan, yuanText } from './ledger';

export const CAP_FIELD = '"Max Spend per Execution (Yuan)" in the credential';
export const BUDGET_FIELDS = { day: '"Daily Budget (Yuan)" in the credential', month: '"Monthly Budget (Yuan)" in the credential' };

/** A refused reservation, as the ledger tells it. */
export interface Refused {
	limit: LimitName;
	limitUnits: number;
	spent: LedgerSpent;
	period: LedgerPeriod;
}

const BUDGET = {
	day: { name: 'Daily budget', spent: 'today (China time)', resets: (period: LedgerPeriod) => period.dayResetsAt },
	month: { name: 'Monthly budget', spent: 'this month (China time)', resets: (period: LedgerPeriod) => period.monthResetsAt },
};

const spentOf = (refused: Refused) => (refused.limit === 'cap' ? refused.spent.execution : refused.limit === 'day' ? refused.spent.day : refused.spent.month);

/**
 * "Daily budget: 1.2 yuan more would bring …": one more attempt (or page) refused; `lead` names
 * what was refused ("the next paid call (0.2 yuan)").
 */
export function attemptRefusal(yuan: number, refused: Refused, lead = `${yuan} yuan more`): string {
	const total = toYuan(spentOf(refused)) + yuan;
	const limit = toYuan(refused.limitUnits);
	if (refused.limit === 'cap') {
		return `Spending cap: ${lead} would bring this execution's spend with this credential to ${round(total)} yuan, above the cap of ${limit} yuan`;
	}
	const budget = BUDGET[refused.limit];
	return `${budget.name}: ${lead} would bring the spend of this credential's account ${budget.spent} to ${yuanText(spentOf(refused) + Math.round(yuan * 10_000))} yuan, above its ${budget.name.toLowerCase()} of ${yuanText(refused.limitUnits)} yuan (${yuanText(spentOf(refused))} yuan spent; it resets at ${budget.resets(refused.period)})`;
}

/** "Spending cap: this node's paid calls are estimated at …": a node refused before its first paid call. */
export function estimateRefusal(estimateYuan: number, what: string, refused: Refused): string {
	const spent = toYuan(spentOf(refused));
	if (refused.limit === 'cap') {
		return `Spending cap: this node's paid calls are estimated at ${round(estimateYuan)} yuan (${what}); with ${spent} yuan already spent in this execution with this credential that is ${round(spent + estimateYuan)} yuan, above the cap of ${toYuan(refused.limitUnits)} yuan`;
	}
	const budget = BUDGET[refused.limit];
	return `${budget.name}: this node's paid calls are estimated at ${round(estimateYuan)} yuan (${what}); with ${yuanText(spentOf(refused))} yuan already spent ${budget.spent} by this credential's account that is ${yuanText(spentOf(refused) + Math.round(estimateYuan * 10_000))} yuan, above its ${budget.name.toLowerCase()} of ${yuanText(refused.limitUnits)} yuan; it resets at ${budget.resets(refused.period)}`;
}

/** What to change: the field of the limit that refused. */
export function refusalFix(limit: LimitName, fewer = 'give the node fewer items'): string {
	if (limit === 'cap') return `Raise ${CAP_FIELD}, or ${fewer}.`;
	return `Raise ${BUDGET_FIELDS[limit]}, or run it again once the budget resets.`;
}

/** "12.40 of 50.00 yuan today; 130.00 of 500.00 yuan this month (China time)", or undefined without a budget. */
export function budgetLine(limits: MoneyLimits, spent: LedgerSpent): string | undefined {
	const parts: string[] = [];
	if (limits.dailyYuan > 0) parts.push(`${yuanText(spent.day)} of ${limits.dailyYuan.toFixed(2)} yuan today`);
	if (limits.monthlyYuan > 0) parts.push(`${yuanText(spent.month)} of ${limits.monthlyYuan.toFixed(2)} yuan this month`);
	return parts.length === 0 ? undefined : `Budget: ${parts.join('; ')} (China time)`;
}

const round = (yuan: number): number => Math.round(yuan * 10000) / 10000;
