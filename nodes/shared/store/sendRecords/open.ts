import { NodeOperationError, type IExecuteFunctions, type INode } from 'n8n-workflow';

import { DatabaseRecordStore } from './databaseStore';
import { RedisRecordStore } from './redisStore';
import { redisFor, RedisUnavailable, releaseRedis } from '../redis/connection';
import { SmsSendRecords, type SmsLimits } from './rules';
import { nodeRecords, recordsScope } from '../nodeRecords';
import type { GatewayClient } from '../../transport/gatewayClient';

/**
 * The send records of one node run: in the Redis the credential names (atomic across every n8n
 * process), else in n8n's database (serialised within this process). `limits` is undefined for
 * signature and template creates, which only use the repeat window.
 */
export function openSendRecords(ctx: IExecuteFunctions, client: GatewayClient, limits: SmsLimits | undefined, repeatWindowMinutes: number): SmsSendRecords {
	const scope = recordsScope(ctx);
	const executionId = ctx.getExecutionId?.() ?? '';
	const redis = client.settings.limiter.sharedRedis;
	const owner = `records:${client.accountKey}`;
	if (!redis) {
		releaseRedis(owner);
		return new SmsSendRecords(new DatabaseRecordStore(nodeRecords(ctx), scope, executionId, limits, repeatWindowMinutes));
	}
	return new SmsSendRecords(new RedisRecordStore(redisFor(redis, owner), scope, executionId, limits, repeatWindowMinutes, { timeoutMs: client.settings.timeoutMs }));
}

/**
 * The records could not be read or written, so nothing was sent: without them a retried execution
 * could text people twice. `what` names what was not done ("SMS", "Signature create").
 */
export function recordsUnavailable(node: INode, where: string, what: string, error: unknown): NodeOperationError {
	const reason = error instanceof Error ? error.message : String(error);
	const redis = error instanceof RedisUnavailable;
	const message = redis ? `${what} not sent: ${reason}` : `Could not read or write this node's send records in ${where}: ${reason}`;
	const failure = new NodeOperationError(node, message, {
		description: redis
			? `This node's send records are in the credential's Redis (${where}), which could not be used; nothing was sent, as without them a retried execution could text people twice. Fix the field named, or clear Shared Redis URL for Limits and Send Records to keep them in n8n's database.`
			: 'Nothing was sent: without the records a retried execution could text people twice. Check the n8n database, then run again.',
	});
	// n8n swaps a message naming a connection code (ECONNREFUSED) for a generic one; this one names the field to fix.
	failure.message = message;
	return failure;
}
