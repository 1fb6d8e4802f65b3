/**
 * Where the guardrails of one account live (issue 41): the scope their keys are written under
 * (gateway/accountScope.ts), the scopes whose keys still count (the key the release before wrote,
 * a credential's scope before its Account or Base URL changed), and the stores that may hold them:
 * the store in use, and, when that is a Redis, this host's SQLite file, which held them before a
 * Redis was added or n8n moved to queue mode. Entries are never copied: they are read where they
 * are (an opt-out listed in any counts; spend adds up), so nothing is lost and nothing is counted twice.
 */
import type { GuardAccount } from '../gateway/accountScope';
import { placeOf, StoreUnavailable, type DurableStore } from './durableStore';
import { storeFilePath } from './hostEnvironment';
import { earlierStoresOf } from './openStore';
import { REDIS_URL_FIELD } from './redis/settings';
import { storeFileExists } from './sqliteFiles';

/** The account's guardrails as one run sees them. */
export interface GuardScope {
	/** The store written to. */
	store: DurableStore;
	/** Read-only stores whose entries still count (this host's SQLite file under a Redis). */
	earlier: DurableStore[];
	/** The scope new entries are written under. */
	scope: string;
	/** Scopes whose entries still count: read, never written (a removal deletes them). */
	former: string[];
	/** Where the account's guardrails went when this store is one a Redis reads through (openGuardScope refuses then). */
	movedTo?: string;
}

/** A scope with nothing linked to it, in one store (tests, and callers that know no more). */
export const plainScope = (store: DurableStore, scope: string): GuardScope => ({ store, earlier: [], scope, former: [] });

/** Every scope whose entries count, the one written first. */
export const scopesOf = (guard: GuardScope): string[] => [guard.scope, ...guard.former];

/** Scopes linked to a scope (JSON list), and the scope a credential used last; both kept until deleted. */
const linksKey = (scope: string) => `scope-links|${scope}`;
const credentialKey = (credential: string) => `credential-scope|${credential}`;
/** In an earlier store: where the scope's guardrails went (a Redis), so that processes still on that store refuse. */
const movedKey = (scope: string) => `scope-moved|${scope}`;

function listOf(value: string | undefined): string[] {
	try {
		// Stryker disable next-line StringLiteral: JSON.parse("") throws, and the catch answers [] too.
		const parsed: unknown = JSON.parse(value ?? '[]');
		return Array.isArray(parsed) ? parsed.filter((entry): entry is string => typeof entry === 'string') : [];
	} catch {
		return [];
	}
}

/** What a store says of the account's scope: its links, the scope the credential used last and that scope's links, where it moved. */
interface Links {
	linked: string[];
	used?: string;
	usedLinks: string[];
	moved?: string;
}

async function readLinks(store: DurableStore, account: GuardAccount): Promise<Links> {
	// Stryker disable next-line ConditionalExpression,ArrayDeclaration: without a credential its key ("credential-scope|undefined") is never written, so reading it finds nothing either way.
	const keys = [linksKey(account.scope), movedKey(account.scope), ...(account.credential === undefined ? [] : [credentialKey(account.credential)])];
	const [links, moved, used] = await store.read(keys);
	// Stryker disable next-line ConditionalExpression,LogicalOperator,ArrayDeclaration: usedLinks is read only when used is another scope (wantedLinks), so what it holds otherwise changes nothing.
	const usedLinks = used !== undefined && used !== account.scope ? listOf((await store.read([linksKey(used)]))[0]) : [];
	return { linked: listOf(links), used, usedLinks, moved };
}

/** The scopes a store's links add: the release-before key of a credential it has not seen, the credential's earlier scope and its links. */
function wantedLinks(account: GuardAccount, links: Links): string[] {
	// Stryker disable next-line ConditionalExpression: links.used is read only for a credential (readLinks), so the first half adds nothing; the second's "true" and the filter below's each stand in for the other (the own scope is filtered out either way).
	const seenBefore = account.credential !== undefined && links.used !== undefined;
	// Stryker disable next-line ConditionalExpression: as above.
	const earlier = links.used !== undefined && links.used !== account.scope ? [links.used, ...links.usedLinks] : [];
	// Stryker disable next-line MethodExpression,ConditionalExpression: as above.
	return [...(seenBefore ? [] : [account.legacy]), ...earlier].filter((scope) => scope !== account.scope);
}

/**
 * Links to the account's scope what its entries may still be under: the release-before key of a
 * credential seen for the first time, and the scope a credential used before (its Account set or
 * changed, its gateway's address changed). Read first; written (one atomic update) only when
 * something is new. Returns every linked scope.
 */
async function linkScopes(store: DurableStore, account: GuardAccount): Promise<{ linked: string[]; moved?: string }> {
	const seen = await readLinks(store, account);
	// Stryker disable next-line ConditionalExpression: { moved: undefined } reads as no mark in guardScope too.
	const moved = seen.moved === undefined ? {} : { moved: seen.moved };
	if (wantedLinks(account, seen).every((scope) => seen.linked.includes(scope)) && (account.credential === undefined || seen.used === account.scope)) return { linked: seen.linked, ...moved };
	// Stryker disable next-line ConditionalExpression,ArrayDeclaration: without a credential its key is only read here, never written (the decision below writes it for a credential only).
	const keys = [linksKey(account.scope), ...(account.credential === undefined ? [] : [credentialKey(account.credential)])];
	const read = [...new Set([...seen.linked, ...wantedLinks(account, seen)])];
	// Not written (a store refusing writes, a Redis that may evict): this run still counts every scope it read; its own writes fail with their own error.
	const linked = await store.update(keys, ([links, used]) => {
		const linked = listOf(links);
		const added = wantedLinks(account, { ...seen, used }).filter((scope) => !linked.includes(scope));
		const next = [...linked, ...added];
		const writes = [
			...(added.length > 0 ? [{ key: linksKey(account.scope), value: JSON.stringify(next) }] : []),
			// Stryker disable next-line ConditionalExpression: "true" writes the scope the credential already holds (reached only when another process wrote it meanwhile): the same value.
			...(account.credential !== undefined && used !== account.scope ? [{ key: credentialKey(account.credential), value: account.scope }] : []),
		];
		return { writes, result: next };
	}).catch(() => read);
	return { linked, ...moved };
}

function movedAway(store: DurableStore, to: string): string {
	return (
		`This account's opt-out list and budgets are kept in the Redis at ${to} since a credential of it used that Redis (its "${REDIS_URL_FIELD}", or n8n's queue mode): ` +
		`${store.label} no longer holds all of them, so nothing is sent or counted here. Set that Redis as this credential's "${REDIS_URL_FIELD}" (or run n8n in queue mode with it)`
	);
}

/**
 * The links each earlier store holds (read only), and a mark there that the account's guardrails
 * now live in `store`: a process still using the earlier store refuses them (movedAway). A later
 * Redis moves the mark on (a Redis replaced on purpose must not lock the account out).
 */
async function earlierLinks(store: DurableStore, earlier: DurableStore[], account: GuardAccount): Promise<string[]> {
	const found: string[] = [account.legacy];
	const place = placeOf(store.label);
	for (const before of earlier) {
		const links = await readLinks(before, account);
		found.push(...links.linked, ...wantedLinks(account, links));
		if (links.moved === place) continue;
		const key = movedKey(account.scope);
		// Stryker disable next-line ConditionalExpression,ArrayDeclaration: the mark was read as another place just before; the same value again only if another process wrote it meanwhile.
		await before.update([key], ([value]) => ({ writes: value === place ? [] : [{ key, value: place }], result: undefined }));
	}
	return found;
}

const resolved = new WeakMap<GuardAccount, Map<DurableStore, Promise<GuardScope>>>();

/**
 * The account's scope in this store, resolved once per run (a GuardAccount is made per run). A
 * failure is not kept: the next call asks again.
 */
export async function guardScope(store: DurableStore, account: GuardAccount, earlier: DurableStore[] = []): Promise<GuardScope> {
	let perStore = resolved.get(account);
	if (!perStore) resolved.set(account, (perStore = new Map()));
	let scope = perStore.get(store);
	if (!scope) {
		scope = (async () => {
			// In turn: a store in use that cannot be read must not mark the earlier ones.
			const { linked, moved } = await linkScopes(store, account);
			const fromEarlier = await earlierLinks(store, earlier, account);
			const scopes = new Set([...linked, ...(earlier.length > 0 ? fromEarlier : [])]);
			// Stryker disable next-line MethodExpression,ConditionalExpression: no link ever names the own scope (wantedLinks filters it), so the filter drops nothing; it is there for a store written by hand.
			const former = [...scopes].filter((entry) => entry !== account.scope);
			return { store, earlier, scope: account.scope, former, ...(moved === undefined ? {} : { movedTo: moved }) };
		})();
		perStore.set(store, scope);
		scope.catch(() => perStore.delete(store));
	}
	return await scope;
}

/** What a guardrail needs of the store: to keep the list, to read it before a send, to count spend. */
export type GuardNeed = 'list' | 'send' | 'budget';

const KEPT: Record<GuardNeed, string> = {
	list: 'The opt-out list is kept only where it outlives n8n',
	send: 'An opt-out list may be kept in the SQLite file that this Node cannot read',
	budget: 'The daily and monthly budgets are counted only where the count outlives n8n',
};

/**
 * Why this store may not hold the account's guardrails, or undefined: process memory forgets them on
 * restart (n8n 1.x on Node 20 without a Redis). A send there is refused only when this host's SQLite
 * file exists: a list kept in it by an earlier n8n on a newer Node would go unread.
 */
export function memoryRefusal(store: DurableStore, need: GuardNeed | undefined): string | undefined {
	if (store.kind !== 'memory' || need === undefined) return undefined;
	const file = storeFilePath();
	if (need === 'send' && !storeFileExists(file)) return undefined;
	const where = need === 'send' ? `${KEPT.send} (${file})` : `${KEPT[need]}, and this n8n has only ${store.label}`;
	return `${where}: set "${REDIS_URL_FIELD}" in the credential, or run n8n on Node 22.13 or later (as n8n 2.x does), which keeps them in an SQLite file`;
}

/**
 * The account's scope in the store in use and the stores before it. With a `need` (the list, a send,
 * a budget) refused (StoreUnavailable) in process memory, and in a store the account's guardrails
 * moved away from; without one (the cap of one execution, the quota's courtesy count) never.
 */
export async function openGuardScope(store: DurableStore, account: GuardAccount, need: GuardNeed | undefined): Promise<GuardScope> {
	const refusal = memoryRefusal(store, need);
	if (refusal) throw new StoreUnavailable(store.label, refusal);
	const guard = await guardScope(store, account, earlierStoresOf(store));
	if (need !== undefined && guard.movedTo !== undefined) throw new StoreUnavailable(store.label, movedAway(store, guard.movedTo));
	return guard;
}
