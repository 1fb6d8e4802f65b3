import type { IWebhookFunctions } from 'n8n-workflow';

import type { Signature, Template } from '../shared/gateway/schemas/sms';
import { openDurableStore } from '../shared/store/openStore';
import { recordReview, sightingOf } from '../shared/store/reviewedCatalogue';

/**
 * A review callback's result, written into the catalogue of every account that holds that ID of
 * that kind (the callback names no account; store/reviewedCatalogue.ts), so the SMS node's pickers
 * show it without a query. An ID no account holds is not added: it cannot be tied to an account.
 * Never stops the callback: the catalogue is a convenience.
 */
export async function noteReview(ctx: IWebhookFunctions, action: 'sign' | 'template', object: Signature | Template): Promise<void> {
	try {
		const store = await openDurableStore(ctx, { withoutCredential: true });
		await recordReview(store, action === 'sign' ? 'signature' : 'template', sightingOf(object, 'callback'));
	} catch (error) {
		ctx.logger.warn(`Data Gateway SMS Trigger: the review result was not written into the catalogue: ${error instanceof Error ? error.message : String(error)}`);
	}
}
