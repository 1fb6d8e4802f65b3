import type { IExecuteFunctions, ILoadOptionsFunctions, IWebhookFunctions } from 'n8n-workflow';

import { accountKeyOf, CREDENTIAL_TYPE } from '../../../shared/gateway/account';
import type { GatewayFailure } from '../../../shared/errors/failures';
import { openDurableStore } from '../../../shared/store/openStore';
import { recordSightings, type CatalogueKind, type Sighting } from '../../../shared/store/reviewedCatalogue';
import { settingsFromCredentials } from '../../../shared/transport/settings';

/**
 * The store the catalogue lives in: the one the SMS Trigger opens too (it has no credential, so
 * not the credential's Redis), so that a review callback finds the entries this node wrote.
 */
export async function catalogueStore(ctx: IExecuteFunctions | IWebhookFunctions | ILoadOptionsFunctions) {
	return await openDurableStore(ctx, { withoutCredential: true });
}

/** The credential's account, as the catalogue keys it. */
export async function catalogueAccount(ctx: IExecuteFunctions | ILoadOptionsFunctions): Promise<string> {
	const settings = settingsFromCredentials(await ctx.getCredentials(CREDENTIAL_TYPE));
	return accountKeyOf(settings.baseUrl, settings.appCode);
}

/**
 * Records what this run saw. Never fails the run: the catalogue is a convenience, and a store
 * that cannot be used costs names in a list (the run's own store errors say more where it matters).
 */
export async function noteSightings(ctx: IExecuteFunctions | ILoadOptionsFunctions, kind: CatalogueKind, sightings: readonly Sighting[], accountKey?: string): Promise<void> {
	if (sightings.length === 0) return;
	try {
		await recordSightings(await catalogueStore(ctx), accountKey ?? (await catalogueAccount(ctx)), kind, sightings);
	} catch (error) {
		ctx.logger?.debug?.(`Data Gateway SMS: the catalogue of ${kind}s was not updated: ${error instanceof Error ? error.message : String(error)}`);
	}
}

/** Whether a refusal of a signature or template query says the ID is unknown (the gateway shows no code for it). */
export function saysNotFound(failure: GatewayFailure): boolean {
	return failure.kind === 'gateway-code' && /not found|not exist|no such|不存在|未找到|找不到/i.test(failure.message);
}
