import type { Signature, Template } from '../gateway/schemas/sms';
import type { DurableStore, StoreWrite } from './durableStore';

/**
 * The catalogue of signatures and templates, per account: the gateway cannot list them, so the
 * package keeps what it has seen (created, read, changed, deleted, imported, or reviewed in a
 * callback) for the Signature and Template pickers. One key per account and kind holds a bounded
 * JSON map by ID; a list of accounts lets the SMS Trigger, which has no credential, find them.
 * A convenience: it may vanish (an evicting Redis may drop it), costing names in a list, never a send.
 * Template texts are kept (they are not personal data); variable values never come here.
 */

export type CatalogueKind = 'signature' | 'template';

/** What saw the entry last. */
export type SeenBy = 'create' | 'get' | 'update' | 'delete' | 'import' | 'form' | 'preview' | 'callback';

export interface CatalogueEntry {
	id: string;
	name: string | null;
	/** 0 under review, 1 approved, 2 rejected; null when not known. */
	status: number | null;
	/** The gateway's rejection reason. */
	error: string | null;
	/** A template's text with its ${name} placeholders. */
	content?: string | null;
	/** Deleted through this package: kept to say so, never listed. */
	deleted?: boolean;
	/** ISO time of the store's clock. */
	lastSeen: string;
	seenBy: SeenBy;
}

/** What an answer or callback tells about one object; a field left undefined keeps what the catalogue had. */
export type Sighting = { id: string } & Partial<Omit<CatalogueEntry, 'id' | 'lastSeen'>>;

/** Entries kept per account and kind; beyond it the longest unseen go. */
export const MAX_CATALOGUE_ENTRIES = 300;
/** Accounts the trigger looks through; beyond it the longest unseen go. */
export const MAX_CATALOGUE_ACCOUNTS = 50;

export const catalogueKey = (accountKey: string, kind: CatalogueKind) => `catalogue|${accountKey}|${kind}`;
export const CATALOGUE_ACCOUNTS_KEY = 'catalogue-accounts|';

type EntryMap = Record<string, CatalogueEntry>;

/** A value that is not a JSON object (garbled, older shape) reads as empty: the catalogue only helps. */
function parseObject(value: string | undefined): Record<string, unknown> {
	if (!value) return {};
	try {
		const parsed = JSON.parse(value) as unknown;
		return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
	} catch {
		return {};
	}
}

function parseMap(value: string | undefined): EntryMap {
	const isEntry = (entry: unknown): entry is CatalogueEntry => !!entry && typeof entry === 'object' && typeof (entry as CatalogueEntry).id === 'string';
	return Object.fromEntries(Object.entries(parseObject(value)).filter(([, entry]) => isEntry(entry))) as EntryMap;
}

/** The accounts with a catalogue, each with when it was last written. */
function parseAccounts(value: string | undefined): Record<string, string> {
	return Object.fromEntries(Object.entries(parseObject(value)).filter(([, seen]) => typeof seen === 'string')) as Record<string, string>;
}

/** Keeps the newest `max` of a map whose values carry or are an ISO time. */
function bounded<T>(map: Record<string, T>, max: number, timeOf: (value: T) => string): Record<string, T> {
	const entries = Object.entries(map);
	if (entries.length <= max) return map;
	return Object.fromEntries(entries.sort(([, a], [, b]) => (timeOf(a) < timeOf(b) ? 1 : -1)).slice(0, max));
}

function merged(previous: CatalogueEntry | undefined, sighting: Sighting, lastSeen: string): CatalogueEntry {
	const defined = Object.fromEntries(Object.entries(sighting).filter(([, value]) => value !== undefined));
	return { name: null, status: null, error: null, ...previous, ...defined, id: sighting.id, lastSeen } as CatalogueEntry;
}

/** Records sightings for one account and kind, in one atomic update; returns the entries written. */
export async function recordSightings(store: DurableStore, accountKey: string, kind: CatalogueKind, sightings: readonly Sighting[]): Promise<CatalogueEntry[]> {
	if (sightings.length === 0) return [];
	const key = catalogueKey(accountKey, kind);
	return await store.update([key, CATALOGUE_ACCOUNTS_KEY], ([catalogue, accounts], now) => {
		const lastSeen = new Date(now).toISOString();
		const map = parseMap(catalogue);
		const written = sightings.map((sighting) => (map[sighting.id] = merged(map[sighting.id], sighting, lastSeen)));
		const known = parseAccounts(accounts);
		known[accountKey] = lastSeen;
		const writes: StoreWrite[] = [
			{ key, value: JSON.stringify(bounded(map, MAX_CATALOGUE_ENTRIES, (entry) => entry.lastSeen)) },
			{ key: CATALOGUE_ACCOUNTS_KEY, value: JSON.stringify(bounded(known, MAX_CATALOGUE_ACCOUNTS, (seen) => seen)) },
		];
		return { writes, result: written };
	});
}

/**
 * A review callback names no account: its result goes to every account whose catalogue holds
 * that ID of that kind (IDs are the gateway's, so normally one). Returns how many were updated.
 * An account first listed between the read of the list and the update is not looked at; its
 * entry is then corrected by its next read.
 */
export async function recordReview(store: DurableStore, kind: CatalogueKind, sighting: Sighting): Promise<number> {
	const [accounts] = await store.read([CATALOGUE_ACCOUNTS_KEY]);
	const keys = Object.keys(parseAccounts(accounts)).map((account) => catalogueKey(account, kind));
	if (keys.length === 0) return 0;
	return await store.update(keys, (values, now) => {
		const lastSeen = new Date(now).toISOString();
		const writes: StoreWrite[] = [];
		values.forEach((value, index) => {
			const map = parseMap(value);
			if (!map[sighting.id]) return;
			map[sighting.id] = merged(map[sighting.id], sighting, lastSeen);
			writes.push({ key: keys[index], value: JSON.stringify(map) });
		});
		return { writes, result: writes.length };
	});
}

/** One account's catalogue of one kind, deleted entries included. */
export async function readCatalogue(store: DurableStore, accountKey: string, kind: CatalogueKind): Promise<CatalogueEntry[]> {
	const [value] = await store.read([catalogueKey(accountKey, kind)]);
	return Object.values(parseMap(value));
}

/** What a gateway answer (or callback) says about a signature or template. */
export function sightingOf(object: Signature | Template, seenBy: SeenBy): Sighting {
	const sighting: Sighting = { id: String(object.id), seenBy };
	if (object.name !== undefined) sighting.name = object.name;
	if (object.status !== undefined) sighting.status = object.status;
	if (object.error !== undefined) sighting.error = object.error;
	const content = (object as Template).content;
	if (content !== undefined) sighting.content = content;
	return sighting;
}
