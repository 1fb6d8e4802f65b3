import type { ICredentialType, INodeProperties } from 'n8n-workflow';

import { DEFAULT_LIMITER_SETTINGS, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECONDS } from '../nodes/shared/transport/defaults';
import { TELEPHONE_FREE_DAILY_CALLS } from '../nodes/shared/gateway/catalog';
import { readmeLink } from '../nodes/shared/n8n/readmeLink';

/**
 * The gateway's appCode and how to reach the gateway. The nodes test it with a free call to the
 * violation support rules (see `testedBy` in each node), because the gateway answers HTTP 200
 * with a code in the body, which a declarative credential test cannot read.
 */
export class DataGatewayApi implements ICredentialType {
	name = 'dataGatewayApi';

	displayName = 'Data Gateway API';

	icon = { light: 'file:dataGateway.svg', dark: 'file:dataGateway.dark.svg' } as const;

	documentationUrl = 'https://github.com/data-gateway/n8n-nodes-data-gateway#credentials';

	// Four sections, each opened by a one-line heading (a notice: n8n has no credential sections and
	// nesting the fields would change what saved credentials hold). A new field goes into its section.
	properties: INodeProperties[] = [
		{
			displayName: '<b>Connection</b>: your gateway account and how calls reach it',
			name: 'connectionSection',
			type: 'notice',
			default: '',
		},
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
			displayName: 'Account',
			name: 'account',
			type: 'string',
			default: '',
			placeholder: 'acme-main',
			// One line, as every field of the form (test/unit/editor-texts.test.ts); docs/credential.md#account says more.
			description: "Credentials with one Account share an opt-out list, budgets and quota. Empty: this App Code's account, kept when rotated here.",
		},
		{
			displayName: 'Send App Code As',
			name: 'appCodePlacement',
			type: 'options',
			options: [
				{
					name: 'Query Parameter (appCode)',
					value: 'query',
					description: 'As the gateway documents: ?appCode=… on every request',
				},
				{
					name: 'Authorization Header',
					value: 'header',
					description: 'Authorization: AppCode &lt;code&gt;, for gateways that accept it; keeps the code out of URLs and proxy logs',
				},
			],
			default: 'query',
			description: 'Where each request carries the App Code: in the URL as the gateway documents, or in a header that proxies do not log',
		},
		{
			displayName: 'Timeout (Seconds)',
			name: 'timeoutSeconds',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: DEFAULT_TIMEOUT_SECONDS,
			description: "The longest one item's call may take, retries included",
		},
		{
			displayName: 'Max Retries',
			name: 'maxRetries',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: 10 },
			default: DEFAULT_MAX_RETRIES,
			description: 'Extra attempts for lookups and queries after a network error, 5xx or 429; sends and changes are never retried',
		},
		{
			displayName: 'Max Concurrent Requests',
			name: 'maxConcurrent',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: DEFAULT_LIMITER_SETTINGS.maxConcurrent,
			description: 'Requests in flight at once with this credential in this n8n process',
		},
		{
			displayName: 'Max Requests per Second',
			name: 'maxPerSecond',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 2 },
			default: DEFAULT_LIMITER_SETTINGS.maxPerSecond,
			description: 'Calls per second with this credential',
			hint: '0 = adapt to the gateway: slow down when it answers 429',
		},
		{
			displayName: `<b>Money</b>: 0 turns each off. Budgets hold for the whole gateway account, across workflows and n8n processes. ${readmeLink('budgets')}`,
			name: 'moneySection',
			type: 'notice',
			default: '',
		},
		{
			displayName: 'Max Spend per Execution (Yuan)',
			name: 'maxSpendPerExecution',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 2 },
			default: 0,
			description: 'A node that would pass this spend in one execution stops before its paid calls',
			hint: 'Per execution, counted in the process that runs it. 0 = no cap.',
		},
		{
			displayName: 'Daily Budget (Yuan)',
			name: 'dailyBudgetYuan',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 2 },
			default: 0,
			description: 'Spend of this account per China day, over all executions, workflows and n8n processes; a paid call that could pass it is refused',
			hint: "This account's spend in all n8n processes, kept in the shared store (Redis, else n8n's SQLite file); resets 00:00 China time. 0 = none.",
		},
		{
			displayName: 'Monthly Budget (Yuan)',
			name: 'monthlyBudgetYuan',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 2 },
			default: 0,
			description: 'Spend of this account per China month, over all executions, workflows and n8n processes; a paid call that could pass it is refused',
			hint: "This account's spend in all n8n processes, kept in the shared store (Redis, else n8n's SQLite file); resets on the 1st. 0 = none.",
		},
		{
			displayName: '<b>Telephone plan</b>: how the Telephone node counts the day\'s free identifications',
			name: 'telephoneSection',
			type: 'notice',
			default: '',
		},
		{
			displayName: 'Telephone Plan',
			name: 'telephonePlan',
			type: 'options',
			options: [
				{ name: 'Not Set', value: 'notSet', description: "Identify without counting against a quota; the gateway's answer decides" },
				{ name: 'Member', value: 'member', description: 'Unlimited identifications' },
				{ name: 'Free Quota', value: 'freeQuota', description: 'A number of free identifications a day (100 by default), counted by the package' },
			],
			default: 'notSet',
			description: "The account's plan for telephone identification; the Telephone node counts each day's calls (China time)",
		},
		{
			displayName: 'Free Calls per Day',
			name: 'telephoneDailyFreeCalls',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: TELEPHONE_FREE_DAILY_CALLS,
			description: 'Free identifications a day, from 00:00 China time',
			displayOptions: { show: { telephonePlan: ['freeQuota'] } },
		},
		{
			displayName: 'Refuse Calls Beyond the Quota',
			name: 'telephoneRefuseBeyondQuota',
			type: 'boolean',
			default: true,
			description: "Whether the Telephone node refuses, before calling, identifications beyond the day's quota. Off: the gateway decides.",
			displayOptions: { show: { telephonePlan: ['freeQuota'] } },
		},
		{
			displayName: `<b>Shared Redis</b> (optional): one rate limit across n8n processes. Without it, limits are per process; budgets, send records and opt-outs still hold. ${readmeLink('shared-redis')}`,
			name: 'redisSection',
			type: 'notice',
			default: '',
		},
		{
			displayName: 'Shared Redis URL for Limits and Send Records',
			name: 'sharedLimitRedisUrl',
			type: 'string',
			default: '',
			placeholder: 'redis://127.0.0.1:6379/0',
			description:
				'A Redis every n8n process reaches (in queue mode, the Redis n8n already uses for its queue will do), for shared rate limits and records; redis:// or rediss:// (TLS), /db picks the database',
		},
		{
			displayName: 'Shared Redis Password',
			name: 'sharedLimitRedisPassword',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description: "That Redis's password, if any; the URL's user name, if any, goes with it",
			displayOptions: { hide: { sharedLimitRedisUrl: [''] } },
		},
		{
			displayName: 'Shared Redis CA Certificate',
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
