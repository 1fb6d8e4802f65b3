import type { IDisplayOptions, ILoadOptionsFunctions, INodeListSearchItems, INodeListSearchResult, INodeProperties } from 'n8n-workflow';

import { REVIEW_STATUS_LABELS } from '../../../shared/gateway/catalog';
import { readCatalogue, type CatalogueEntry, type CatalogueKind } from '../../../shared/store/reviewedCatalogue';
import { readmeUrl } from '../../../shared/n8n/readmeLink';
import { noteVariableValues } from '../message/variableValues';
import { catalogueAccount, catalogueStore } from './access';

/** The listSearch methods behind the pickers' "From List". */
export const SEARCH_METHODS: Record<CatalogueKind, string> = { signature: 'searchSignatures', template: 'searchTemplates' };

/** The version whose Signature and Template are pickers; saved nodes keep their ID fields. */
export const PICKER_VERSION = 1.4;
export const FROM_PICKER_VERSION = { '@version': [{ _cnd: { gte: PICKER_VERSION } }] };

/** The ID a field holds: a picker's value (`{ __rl, mode, value }`) or the plain ID of earlier versions. */
export function idValue(raw: unknown): unknown {
	if (raw !== null && typeof raw === 'object' && 'value' in raw) return (raw as { value: unknown }).value;
	return raw;
}

/** Whether a field's value is a picker's. */
export const isPicked = (raw: unknown) => raw !== null && typeof raw === 'object' && 'value' in raw;

/** Signature or Template as a resource locator: from the catalogue by name, or by ID as before. */
export function pickerField(name: string, kind: CatalogueKind, show: NonNullable<IDisplayOptions['show']>): INodeProperties {
	const noun = kind;
	const label = kind === 'signature' ? 'Signature' : 'Template';
	return {
		displayName: label,
		name,
		type: 'resourceLocator',
		required: true,
		default: { mode: 'list', value: '' },
		description: `An approved ${noun}, from the ${noun}s this package created, read or imported for this credential`,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: `Select a ${noun}...`,
				typeOptions: { searchListMethod: SEARCH_METHODS[kind], searchable: true, searchFilterRequired: false },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: kind === 'signature' ? 'e.g. 12' : 'e.g. 34',
				// Shown in this mode only: the list mode says how to fill itself when empty (emptyListGuide).
				hint: `The ID beside the ${noun} in the gateway console's SMS settings`,
				validation: [{ type: 'regex', properties: { regex: '^\\s*[0-9]+\\s*$', errorMessage: `Enter the ${noun}'s numeric ID` } }],
			},
		],
		displayOptions: { show: { ...show, ...FROM_PICKER_VERSION } },
	};
}

/** Approved first, then under review, then rejected, then unknown; by name within each. */
const STATUS_ORDER: Record<string, number> = { '1': 0, '0': 1, '2': 2 };
const rank = (entry: CatalogueEntry) => STATUS_ORDER[String(entry.status)] ?? 3;

const TEXT_IN_LIST = 40;

/** One line of the list: name, ID, a status other than approved (with the gateway's reason), a template's text. */
export function entryLabel(entry: CatalogueEntry): string {
	const parts = [entry.name?.trim() || '(no name)', `#${entry.id}`];
	if (entry.status !== 1) {
		const status = entry.status === null ? 'status unknown' : (REVIEW_STATUS_LABELS[String(entry.status)] ?? `status ${entry.status}`);
		parts.push(entry.status === 2 && entry.error ? `${status}: ${entry.error}` : status);
	}
	if (entry.content) parts.push(entry.content.length > TEXT_IN_LIST ? `${entry.content.slice(0, TEXT_IN_LIST)}…` : entry.content);
	return parts.join(' · ');
}

function matches(entry: CatalogueEntry, filter: string): boolean {
	if (!filter) return true;
	const status = REVIEW_STATUS_LABELS[String(entry.status)] ?? '';
	return [entry.name, entry.id, entry.content, status].some((text) => (text ?? '').toLowerCase().includes(filter));
}

/**
 * What an empty list shows instead of n8n's bare "No results" (which also covers the field's hint):
 * how to fill it, as an entry whose empty value picks nothing and whose link opens the docs.
 */
export function emptyListGuide(kind: CatalogueKind, filter: string): INodeListSearchItems {
	const label = kind === 'signature' ? 'Signature' : 'Template';
	const none = filter ? `No ${kind} matches "${filter}".` : `No ${kind}s yet.`;
	return {
		name: `${none} Fill the list: ${label} → Create, or ${label} → Import to Catalogue with IDs from the gateway console's SMS settings. Or choose By ID.`,
		value: '',
		url: readmeUrl('pick-signatures-and-templates-by-name-sms-14'),
	};
}

/** The account's catalogue of one kind, searched by name, ID, text or status; deleted ones left out. */
export async function searchCatalogue(ctx: ILoadOptionsFunctions, kind: CatalogueKind, filter?: string): Promise<INodeListSearchResult> {
	const entries = await readCatalogue(await catalogueStore(ctx), await catalogueAccount(ctx), kind);
	const wanted = (filter ?? '').trim().toLowerCase();
	const results: INodeListSearchItems[] = entries
		.filter((entry) => !entry.deleted && matches(entry, wanted))
		.sort((a, b) => rank(a) - rank(b) || (a.name ?? '').localeCompare(b.name ?? '') || Number(a.id) - Number(b.id))
		.map((entry) => ({ name: entryLabel(entry), value: entry.id }));
	return { results: results.length > 0 ? results : [emptyListGuide(kind, wanted)] };
}

export async function searchSignatures(this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
	return await searchCatalogue(this, 'signature', filter);
}

export async function searchTemplates(this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
	// Opening this list is how a template is changed: the variables typed so far are noted first.
	noteVariableValues(this);
	return await searchCatalogue(this, 'template', filter);
}
