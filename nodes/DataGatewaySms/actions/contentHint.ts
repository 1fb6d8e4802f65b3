import type { IExecuteFunctions } from 'n8n-workflow';

import { plural } from '../../shared/output/plural';

/**
 * One execution hint per run when the content checks warned (checks/content.ts): the warnings
 * themselves are on the items (`contentWarnings`), where each names the rule and the words.
 */
export function addContentHint(ctx: IExecuteFunctions, warnings: number): void {
	if (typeof ctx.addExecutionHints !== 'function') return;
	try {
		ctx.addExecutionHints({
			message: `Content checks: ${plural(warnings, 'warning')} (see contentWarnings on the items). The gateway freezes a signature or template whose content breaks its rules, without refunding packages: reword it, or let its reviewers judge.`,
			type: 'warning',
			location: 'outputPane',
		});
	} catch {
		// A hint is a courtesy: it must never fail a run that succeeded.
	}
}
