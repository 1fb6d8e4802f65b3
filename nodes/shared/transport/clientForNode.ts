import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IExecuteFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';
import { z } from 'zod/v4';

import { GatewayFailure } from '../errors/failures';
import { redactSecret } from '../errors/redact';
import { CREDENTIAL_TYPE } from '../gateway/account';
import { guardAccountOf, type GuardAccount } from '../gateway/accountScope';
import { redisFor } from '../store/redis/connection';
import { SpendMeter } from '../money/spend';
import { openDurableStore } from '../store/openStore';
import { setRunAccount } from '../usage/runUsage';
import { GatewayClient } from './gatewayClient';
import { settingsFromCredentials, type GatewaySettings } from './settings';

export const CREDENTIAL_TEST_METHOD = 'dataGatewayApiTest';

/** The meter of each client a node run made: its steps and its client share one reserve. */
const meters = new WeakMap<GatewayClient, SpendMeter>();

function meterFor(ctx: IExecuteFunctions, account: GuardAccount, settings: GatewaySettings): SpendMeter {
	let opened: ReturnType<typeof openDurableStore> | undefined;
	return new SpendMeter(ctx, account, settings.money, async () => await (opened ??= openDurableStore(ctx)));
}

/**
 * The gateway client for the credential selected on the node. Every attempt of its paid calls
 * counts against the credential's spending cap and budgets, or is refused by them.
 */
export async function gatewayClient(ctx: IExecuteFunctions): Promise<GatewayClient> {
	const settings = settingsFromCredentials(await ctx.getCredentials(CREDENTIAL_TYPE));
	// n8n's id of the credential: its guardrails follow it when its Account or Base URL changes.
	const credential = ctx.getNode().credentials?.[CREDENTIAL_TYPE]?.id ?? undefined;
	// One account for the meter, the guards and the usage counts: its scope is resolved once per run (store/guardScope.ts).
	const guard = guardAccountOf(settings, credential);
	const meter = meterFor(ctx, guard, settings);
	const client = new GatewayClient(settings, { spend: meter, guard });
	meters.set(client, meter);
	setRunAccount(ctx, client.guard);
	return client;
}

/** The client's meter: what was spent with its credential, against the cap and budgets. */
export function spendMeter(ctx: IExecuteFunctions, client: GatewayClient): SpendMeter {
	let meter = meters.get(client);
	if (!meter) meters.set(client, (meter = meterFor(ctx, client.guard, client.settings)));
	return meter;
}

/** Call options that cancel with the execution and log through n8n's logger. */
export function callOptions(ctx: IExecuteFunctions) {
	return { signal: ctx.getExecutionCancelSignal?.(), logger: ctx.logger };
}

/**
 * Credential test: the violation support rules are free and change nothing, and a wrong appCode
 * gets a non-zero code there like everywhere else.
 */
export async function testGatewayCredential(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const settings = settingsFromCredentials(credential.data ?? {});
	if (!settings.appCode) return { status: 'Error', message: 'App Code is empty: paste the appCode of your gateway account.' };
	if (!/^https?:\/\/[^/\s]+/i.test(settings.baseUrl)) {
		return { status: 'Error', message: 'Base URL must start with http:// or https://, for example https://gateway.example.com' };
	}
	// Its own limiter: the test answers at once even while a 429 has paused the credential's calls.
	const client = new GatewayClient({ ...settings, maxRetries: 0 }, { ownLimiter: true });
	try {
		await client.call('violationSupport', { preCarNum: '京' }, z.unknown());
	} catch (error) {
		if (error instanceof GatewayFailure && error.kind === 'gateway-code') {
			return {
				status: 'Error',
				message: `The gateway refused the appCode (code ${error.gatewayCode}: ${error.message}). Check the App Code and that the account is active.`,
			};
		}
		const text = redactSecret(error instanceof Error ? error.message : String(error), settings.appCode);
		return { status: 'Error', message: `Could not reach the gateway at the Base URL: ${text}` };
	}
	const redis = settings.limiter.sharedRedis;
	if (!redis) return { status: 'OK', message: 'Connection successful: the gateway accepted the appCode' };
	try {
		await redisFor(redis, 'credential-test').command('PING', []);
		return { status: 'OK', message: 'Connection successful: the gateway accepted the appCode, and the shared Redis answered' };
	} catch (error) {
		return { status: 'Error', message: `The gateway accepted the appCode, but the shared Redis cannot be used: ${error instanceof Error ? error.message : String(error)}` };
	}
}
