/**
 * Issue 41 part A on every store (memory, the SQLite file, a real redis-server): the account's
 * scope (gateway/accountScope.ts) and what still counts with it (store/guardScope.ts), the opt-out
 * list over those scopes and stores (store/optOutList.ts), and the telephone quota the same way.
 */
import { accountKeyOf } from '../../nodes/shared/gateway/account';
import { guardAccountOf, guardScopeOf, normalisedBaseUrl, type GuardAccount } from '../../nodes/shared/gateway/accountScope';
import { countCalls, reserveCalls } from '../../nodes/shared/lookups/telephoneQuota';
import { StoreUnavailable, type DurableStore } from '../../nodes/shared/store/durableStore';
import { guardScope, memoryRefusal, openGuardScope, plainScope, type GuardScope } from '../../nodes/shared/store/guardScope';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { changeOptOuts, optOutKey, readOptOuts } from '../../nodes/shared/store/optOutList';
import { recordStores } from '../harness/recordStores';
import { freshKey } from './contract';

describe('the account scope', () => {
	it('one gateway whatever its spelling: host case, trailing slashes, localhost, default ports; a path is kept', () => {
		const spellings = ['http://127.0.0.1:8080', 'HTTP://127.0.0.1:8080/', 'http://localhost:8080//', ' http://LocalHost:8080 ', 'http://[::1]:8080/'];
		expect(new Set(spellings.map(normalisedBaseUrl))).toEqual(new Set(['http://127.0.0.1:8080']));
		expect(normalisedBaseUrl('https://Gateway.Example.com:443/api/')).toBe('https://gateway.example.com/api');
		expect(normalisedBaseUrl('http://gateway.example.com:80')).toBe('http://gateway.example.com');
		expect(normalisedBaseUrl('https://gateway.example.com:8443')).toBe('https://gateway.example.com:8443');
		expect(normalisedBaseUrl('https://gateway.example.com/API')).not.toBe(normalisedBaseUrl('https://gateway.example.com/api/v2'));
		expect(normalisedBaseUrl(' not a URL/ ')).toBe('not a url');
	});

	it('is the Account when set (whatever the Base URL), else the gateway; never the appCode; the old key is the release before’s', () => {
		const one = guardAccountOf({ baseUrl: 'http://127.0.0.1:8080', appCode: 'code-one', accountName: '' }, 'cred-1');
		const rotated = guardAccountOf({ baseUrl: 'http://LOCALHOST:8080/', appCode: 'code-two' }, 'cred-1');
		expect(one.scope).toBe(rotated.scope);
		expect(one).toEqual({ scope: 'gateway:http://127.0.0.1:8080', legacy: accountKeyOf('http://127.0.0.1:8080', 'code-one'), credential: 'cred-1' });
		expect(JSON.stringify(one)).not.toContain('code-one');
		expect(guardScopeOf('http://a.example', 'acme')).toBe(guardScopeOf('http://b.example', 'acme'));
		expect(guardScopeOf('http://a.example', 'acme')).not.toBe(guardScopeOf('http://a.example', 'other'));
	});

	it('process memory refuses the list and the budgets, and a send only when a store file may hold a list', () => {
		const memory = new MemoryStore();
		expect(memoryRefusal(memory, 'list')).toMatch(/^The opt-out list is kept only where it outlives n8n/);
		expect(memoryRefusal(memory, 'budget')).toMatch(/^The daily and monthly budgets are counted only where the count outlives n8n/);
		expect(memoryRefusal(memory, undefined)).toBeUndefined();
		const file = new MemoryStore();
		Object.defineProperty(file, 'kind', { value: 'sqlite' });
		expect(memoryRefusal(file, 'list')).toBeUndefined();
	});
});

describe.each(recordStores())('on the %s store', (_kind, open) => {
	let clock = Date.UTC(2026, 10, 26, 3);
	const account = (credential?: string, scope = freshKey('scope')): GuardAccount => ({ scope, legacy: freshKey('legacy'), ...(credential ? { credential } : {}) });

	it('links the release before’s key on a credential’s first run only, and its earlier scope when its scope changes', async () => {
		const { store } = await open(() => clock);
		const credential = freshKey('credential');
		const first = account(credential);
		expect((await guardScope(store, first)).former).toEqual([first.legacy]);
		// The same credential, its appCode rotated (another legacy key): nothing new is linked.
		const rotated = { ...first, legacy: freshKey('legacy') };
		expect((await guardScope(store, rotated)).former).toEqual([first.legacy]);
		// Its Account set: the earlier scope and what it linked follow.
		const named = { ...rotated, scope: freshKey('scope') };
		expect((await guardScope(store, named)).former).toEqual([first.scope, first.legacy]);
		// Another credential reaching the named scope gets the links too (its own first-run key as well).
		const other = { ...account(freshKey('credential')), scope: named.scope };
		expect(new Set((await guardScope(store, other)).former)).toEqual(new Set([first.scope, first.legacy, other.legacy]));
	});

	it('the list over every scope: a number listed under a former scope or in an earlier store is listed, keeps its first time, and a removal deletes it everywhere', async () => {
		const { store } = await open(() => clock);
		const earlier = new MemoryStore(() => clock);
		const [scope, former] = [freshKey('scope'), freshKey('former')];
		await changeOptOuts(plainScope(store, former), ['13900000001'], 'add');
		clock += 60_000;
		await changeOptOuts(plainScope(earlier, scope), ['13900000002'], 'add');
		const guard: GuardScope = { store, earlier: [earlier], scope, former: [former] };
		const listed = await readOptOuts(guard, ['13900000001', '13900000002', '13900000003']);
		expect([...listed.keys()].sort()).toEqual(['13900000001', '13900000002']);
		clock += 60_000;
		const before = await changeOptOuts(guard, ['13900000001', '13900000002', '13900000003'], 'add');
		expect(before).toEqual(listed);
		// The number is now under the account's own scope, with its first time: a second Add changes nothing.
		expect(await store.read([optOutKey(scope, '13900000001')])).toEqual([String(listed.get('13900000001'))]);
		clock += 60_000;
		const third = await changeOptOuts(plainScope(store, scope), ['13900000001', '13900000003'], 'add');
		expect([...third.keys()]).toEqual(['13900000001', '13900000003']);
		expect(third.get('13900000001')).toBe(listed.get('13900000001'));
		await changeOptOuts(guard, ['13900000001', '13900000002'], 'remove');
		expect(await readOptOuts(guard, ['13900000001', '13900000002'])).toEqual(new Map());
		expect(await earlier.read([optOutKey(scope, '13900000002')])).toEqual([undefined]);
		expect(await store.read([optOutKey(former, '13900000001')])).toEqual([undefined]);
	});

	it('lists per account: a number opted out with one account is sent by another', async () => {
		const { store } = await open(() => clock);
		const [one, two] = [freshKey('scope'), freshKey('scope')];
		await changeOptOuts(plainScope(store, one), ['13900000004'], 'add');
		expect((await readOptOuts(plainScope(store, two), ['13900000004'])).size).toBe(0);
		expect((await readOptOuts(plainScope(store, one), ['13900000004'])).size).toBe(1);
	});

	it('the telephone quota counts the former scopes and earlier stores too', async () => {
		const { store } = await open(() => clock);
		const earlier = new MemoryStore(() => clock);
		const [scope, former] = [freshKey('scope'), freshKey('former')];
		const plan = { kind: 'freeQuota' as const, dailyFreeCalls: 5, refuseBeyondQuota: true };
		await countCalls(plainScope(store, former), undefined, 2);
		const day = (await reserveCalls(plainScope(store, scope), { ...plan, dailyFreeCalls: 0 }, 1)).day;
		await countCalls(plainScope(earlier, scope), day, 1);
		const guard: GuardScope = { store, earlier: [earlier], scope, former: [former] };
		expect(await reserveCalls(guard, plan, 5)).toMatchObject({ used: 3, granted: 2 });
		expect(await countCalls(guard, day, -1)).toBe(4);
	});
});

describe('the stores the account moved between', () => {
	it('a store still used after the account moved to a Redis refuses, naming it; two Redis for one account refuse the second', async () => {
		const file = new MemoryStore();
		Object.defineProperty(file, 'kind', { value: 'sqlite' });
		const redis = redisLike("the credential's Redis at 10.0.0.5:6379/0");
		const another = redisLike("the credential's Redis at 10.0.0.6:6379/0");
		const guard = account();
		await guardScope(redis, guard, [file]);
		// Without a need (the cap of one execution) the file is still used; the list and budgets are refused there.
		expect(await openGuardScope(file, { ...guard }, undefined)).toMatchObject({ movedTo: '10.0.0.5:6379/0' });
		const moved = await openGuardScope(file, { ...guard }, 'list').catch((error: unknown) => error);
		expect(moved).toBeInstanceOf(StoreUnavailable);
		expect((moved as Error).message).toMatch(/^This account's opt-out list and budgets are kept in the Redis at 10\.0\.0\.5:6379\/0 since a credential of it used that Redis.*Set that Redis as this credential's "Shared Redis URL for Limits and Send Records"/);
		await expect(guardScope(another, { ...guard }, [file])).rejects.toThrow(/kept in the Redis at 10\.0\.0\.5:6379\/0/);
		// The same Redis reached as n8n's queue Redis is the same place.
		const queue = redisLike("n8n's queue Redis at 10.0.0.5:6379/0");
		await expect(guardScope(queue, { ...guard }, [file])).resolves.toMatchObject({ scope: guard.scope });
	});

	/** A store that names itself as a Redis does (only its label and kind matter here). */
	function redisLike(label: string): DurableStore {
		const store = new MemoryStore();
		Object.defineProperty(store, 'kind', { value: 'redis' });
		Object.defineProperty(store, 'label', { value: label });
		return store;
	}

	function account(): GuardAccount {
		return { scope: freshKey('scope'), legacy: freshKey('legacy'), credential: freshKey('credential') };
	}
});
