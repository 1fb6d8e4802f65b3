import type { ICredentialType, INodeProperties } from 'n8n-workflow';

import { DEFAULT_LIMITER_SETTINGS } from '../nodes/shared/limiter';
import { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECONDS } from '../nodes/shared/transport';

/**
 * The gateway's appCode and how to reach the gateway. The nodes test it with a free call to the
 * violation support rules (see `testedBy` in each node), because the gateway answers HTTP 200
 * with a code in the body, which a declarative credential test cannot read.
 */
export class DataGatewayApi implements ICredentialType {
	name = 'dataGatewayApi';

	displayName = 'Data Gateway API';

	icon = { light: 'file:dataGateway.svg', dark: 'file:dataGateway.dark.svg' } as const;

	documentationUrl = 'https://github.com/n8n-nodes-data-gateway/n8n-nodes-data-gateway#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'App Code',
			name: 'appCodeSecret',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description: 'The authorization code (appCode) of your gateway account',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://gateway.example.com',
			description: 'The API root; operation paths such as /telecom/identify are added to it',
		},
		{
			displayName: 'Send App Code As',
			name: 'appCodePlacement',
			type: 'options',
			options: [
				{
					name: 'Query Parameter (appCode)',
					value: 'query',
					description: 'What the gateway documents',
				},
				{
					name: 'Authorization Header',
					value: 'header',
					description: 'Authorization: AppCode &lt;code&gt; keeps the code out of URLs and proxy logs',
				},
			],
			default: 'query',
		},
		{
			displayName: 'Timeout (Seconds)',
			name: 'timeoutSeconds',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: DEFAULT_TIMEOUT_SECONDS,
			description:
				'The longest one item\'s call may take, retries and the waits between them included (waiting for a free slot before the first attempt is not counted). A gateway that never answers fails the item after this time, with the number of attempts made.',
		},
		{
			displayName: 'Max Retries',
			name: 'maxRetries',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: 10 },
			default: DEFAULT_MAX_RETRIES,
			description:
				'Extra attempts for lookups and queries after a network error, HTTP 5xx or 429, made only while the Timeout leaves time for them. Sends, creates, updates and deletes are never retried.',
		},
		{
			displayName: 'Max Concurrent Requests',
			name: 'maxConcurrent',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: DEFAULT_LIMITER_SETTINGS.maxConcurrent,
			description: 'Requests in flight at once with this credential, across all nodes of this n8n process',
		},
		{
			displayName: 'Max Requests per Second',
			name: 'maxPerSecond',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 2 },
			default: DEFAULT_LIMITER_SETTINGS.maxPerSecond,
			description:
				'0 finds the rate by itself: when the gateway answers 429 it waits for Retry-After (at most the Timeout, and never more than 60 s) and settles just below that rate',
		},
		{
			displayName: 'Max Spend per Execution (Yuan)',
			name: 'maxSpendPerExecution',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 2 },
			default: 0,
			description:
				"0 means no cap. Before its first paid call, a node adds the spec's prices of the distinct paid calls its items will make to what earlier nodes of the same execution spent with this credential; above the cap it stops with an error and makes no paid call.",
		},
		{
			displayName: 'Shared Limit Redis URL',
			name: 'sharedLimitRedisUrl',
			type: 'string',
			default: '',
			placeholder: 'redis://127.0.0.1:6379/0',
			description:
				"Redis shared by all n8n processes (queue mode's own works) for the rate limits and SMS send records; redis:// or rediss:// (TLS), /db picks the database. Empty: each process keeps its own.",
		},
		{
			displayName: 'Shared Limit Redis Password',
			name: 'sharedLimitRedisPassword',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description: "That Redis's password, if any; the URL's user name, if any, goes with it",
			displayOptions: { hide: { sharedLimitRedisUrl: [''] } },
		},
		{
			displayName: 'Shared Limit Redis CA Certificate',
			name: 'sharedLimitRedisCa',
			type: 'string',
			typeOptions: { rows: 4 },
			default: '',
			placeholder: '-----BEGIN CERTIFICATE-----',
			description: 'For rediss:// with a self-signed or private CA: its certificate (PEM). Empty: the CAs Node.js trusts.',
			displayOptions: { hide: { sharedLimitRedisUrl: [''] } },
		},
	];
}
