import type { INodeProperties } from 'n8n-workflow';

/** The "Refuse Content Warnings" option of Send's Options collection (content.ts: warnings become refusals). */
export const refuseContentWarningsOption: INodeProperties = {
	displayName: 'Refuse Content Warnings',
	name: 'refuseContentWarnings',
	type: 'boolean',
	default: false,
	description:
		"Whether to refuse an item whose message the content checks warn about (words of the gateway's prohibited categories, disguised key words, invisible or look-alike characters) before it is sent, recorded or counted. The message is checked as the gateway gets it, template with the item's values; the template and signature are read for it (free queries, once per execution) unless given in Template Content and Signature Text. Links to app test-distribution sites in the message are refused too.",
};
