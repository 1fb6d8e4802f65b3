import type { IExecuteFunctions } from 'n8n-workflow';

import { DatabaseRecordStore } from './recordsDatabase';
import { RedisRecordStore } from './recordsRedis';
import { redisFor, releaseRedis } from './redis';
import { SmsSendRecords, type SmsLimits } from './smsGuard';
import { nodeRecords } from './state';
import type { GatewayClient } from './transport';

/**
 * The send records of one node run: in the Redis the credential names (atomic across every n8n
 * process), else in n8n's database (serialised within this process). `limits` is undefined for
 * signature and template creates, which only use the repeat window.
 */
export function openSendRecords(ctx: IExecuteFunctions, client: GatewayClient, limits: SmsLimits | undefined, repeatWindowMinutes: number): SmsSendRecords {
	const scope = `${ctx.getWorkflow().id ?? ''}|${ctx.getNode().id ?? ctx.getNode().name}`;
	const executionId = ctx.getExecutionId?.() ?? '';
	const redis = client.settings.limiter.sharedRedis;
	const owner = `records:${client.accountKey}`;
	if (!redis) {
		releaseRedis(owner);
		return new SmsSendRecords(new DatabaseRecordStore(nodeRecords(ctx), scope, executionId, limits, repeatWindowMinutes));
	}
	return new SmsSendRecords(new RedisRecordStore(redisFor(redis, owner), scope, executionId, limits, repeatWindowMinutes, { timeoutMs: client.settings.timeoutMs }));
}
