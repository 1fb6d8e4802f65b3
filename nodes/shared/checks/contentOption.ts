import type { INodeProperties } from 'n8n-workflow';

/** The "Refuse Content Warnings" option of Send's Options collection (content.ts: warnings become refusals). */
export const refuseContentWarningsOption: INodeProperties = {
	displayName: 'Refuse Content Warnings',
	name: 'refuseContentWarnings',
	type: 'boolean',
	default: false,
	description: 'Whether to refuse, before sending, an item whose message the content checks warn about (prohibited or disguised words, look-alike characters, test-distribution links)',
};
