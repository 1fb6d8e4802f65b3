import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

import { forVersion } from '../shared/n8n/description';
import { readmeLink } from '../shared/n8n/readmeLink';
import { TOKEN_IN_PATH_VERSION } from './callbackUrl';

export const DEFAULT_DUPLICATE_WINDOW_SECONDS = 600;

/** Versions 1 and 1.1: the token goes into the URL as ?token=…; from 1.2 it is a segment of the URL n8n shows. */
const urlTokenOption: INodeProperties = {
	displayName: 'URL Token',
	name: 'token',
	type: 'string',
	typeOptions: { password: true },
	default: '',
	description: 'A secret the callback URL must carry as ?token=…; add it to the URL you paste into the gateway. Otherwise 401.',
};

/** Version 1.2: a secret field like the others, yet readable in the URL shown above, where it is part of the path. */
const pathTokenOption: INodeProperties = {
	displayName: 'URL Token',
	name: 'token',
	type: 'string',
	typeOptions: { password: true },
	// Part of the webhook path, which n8n registers from this field's text (see checkPathToken).
	noDataExpression: true,
	default: '',
	placeholder: 'e.g. the output of openssl rand -hex 16',
	description: 'A secret that becomes part of the callback URL shown above (letters, digits, - and _). A callback to any other URL is refused.',
};

const allowedIpsOption: INodeProperties = {
	displayName: 'Allowed Source IPs',
	name: 'allowedIps',
	type: 'string',
	default: '',
	placeholder: '203.0.113.0/24, 2001:db8::/32',
	description:
		'Comma-separated addresses or CIDR ranges the callbacks may come from; others get 403. Behind a reverse proxy, set N8N_PROXY_HOPS so n8n sees the real source address.',
};

/** What both versions' Security share; their checks differ. */
const securityBase = {
	displayName: 'Security',
	name: 'security',
	type: 'collection',
	placeholder: 'Add Check',
	default: {},
	description: 'The gateway does not sign its callbacks, so choose one or more checks of your own',
} satisfies Partial<INodeProperties>;

/** Version 1.1's checks (1.2's with the token in the path): the header's name and value are one pair, so neither can be set alone. */
const securityFrom1_1 = (tokenOption: INodeProperties, version: IDisplayOptions['show']): INodeProperties => ({
	...securityBase,
	displayOptions: { show: version },
	options: [
		tokenOption,
		{
			displayName: 'Required Header',
			name: 'header',
			type: 'fixedCollection',
			placeholder: 'Add Header',
			default: {},
			description: 'A header every callback must carry; otherwise 401',
			options: [
				{
					displayName: 'Header',
					name: 'pair',
					values: [
						{ displayName: 'Name', name: 'name', type: 'string', default: '', placeholder: 'X-Callback-Secret', required: true },
						{ displayName: 'Value', name: 'value', type: 'string', typeOptions: { password: true }, default: '', required: true },
					],
				},
			],
		},
		allowedIpsOption,
	],
});

export const triggerProperties: INodeProperties[] = [
	// Three notices, each true whatever Security holds (n8n 1.x cannot show a notice by a field inside a
	// collection, and then refuses to activate the workflow), each linking the section it names.
	{
		displayName: `In the gateway console's SMS settings, set the callback URL (回调地址) to the Production URL above (with ?token=… when set), then publish. ${readmeLink('setup-in-the-gateway-console', 'Setup')}`,
		name: 'setupNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { '@version': [{ _cnd: { lt: TOKEN_IN_PATH_VERSION } }] } },
	},
	{
		displayName: `In the gateway console's SMS settings, set the callback URL (回调地址) to the Production URL above, then publish. A localhost URL needs WEBHOOK_URL. ${readmeLink('setup-in-the-gateway-console', 'Setup')}`,
		name: 'setupNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { '@version': [{ _cnd: { gte: TOKEN_IN_PATH_VERSION } }] } },
	},
	{
		displayName: `The gateway signs no callback: a URL Token under Security keeps anyone else from starting this workflow. ${readmeLink('callback-security', 'Security')}`,
		name: 'securityNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: `The gateway sends each event once; Check Pending Deliveries fetches missed reports. The Test URL listens only after "Execute step". ${readmeLink('delivery-reports-tied-to-their-send', 'Missed events')}`,
		name: 'onceNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Events',
		name: 'events',
		type: 'multiOptions',
		required: true,
		default: ['report', 'sign', 'template'],
		options: [
			{ name: 'Delivery Report', value: 'report', description: 'An SMS reached its final status' },
			{ name: 'Signature Review', value: 'sign', description: 'A signature review ended' },
			{ name: 'Template Review', value: 'template', description: 'A template review ended' },
		],
	},
	{
		displayName: 'Report Statuses',
		name: 'reportStatuses',
		type: 'multiOptions',
		default: ['delivered', 'failed'],
		description: 'Which delivery results start the workflow',
		options: [
			{ name: 'Delivered', value: 'delivered' },
			{ name: 'Failed', value: 'failed' },
		],
		displayOptions: { show: { events: ['report'] } },
	},
	{
		displayName: 'Review Results',
		name: 'reviewResults',
		type: 'multiOptions',
		default: ['approved', 'rejected'],
		description: 'Which review results start the workflow',
		options: [
			{ name: 'Approved', value: 'approved' },
			{ name: 'Rejected', value: 'rejected' },
		],
		displayOptions: { show: { events: ['sign', 'template'] } },
	},
	{
		...securityBase,
		displayOptions: forVersion(1),
		options: [
			allowedIpsOption,
			{
				displayName: 'Header Name',
				name: 'headerName',
				type: 'string',
				default: '',
				placeholder: 'X-Callback-Secret',
				description: 'A header every callback must carry, with the value below; otherwise 401',
			},
			{
				displayName: 'Header Value',
				name: 'headerValue',
				type: 'string',
				typeOptions: { password: true },
				default: '',
			},
			urlTokenOption,
		],
	},
	securityFrom1_1(urlTokenOption, { '@version': [1.1] }),
	securityFrom1_1(pathTokenOption, { '@version': [{ _cnd: { gte: TOKEN_IN_PATH_VERSION } }] }),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Duplicate Window (Seconds)',
				name: 'duplicateWindowSeconds',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: DEFAULT_DUPLICATE_WINDOW_SECONDS,
				description: `The same event (action, ID, status; for a report also its number and send time) arriving again within this time starts nothing. 0: off. ${readmeLink('data-gateway-sms-trigger', 'More')}`,
			},
			{
				displayName: 'Output Rejected Events',
				name: 'outputRejected',
				type: 'boolean',
				default: false,
				description:
					'Whether a callback rejected as malformed or unknown (HTTP 400) still starts the workflow, as an item with event "rejected", its reason and raw body, so a format change is noticed',
			},
		],
	},
];
