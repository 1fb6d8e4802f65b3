/**
 * Issue 41 part A without a server (the mutation run's tests): the account's scope
 * (gateway/accountScope.ts), process memory's refusal and the moved mark (store/guardScope.ts), and
 * the cases of test/store/guardScopeCases.ts on process memory (every store: test/store/guardScope.test.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { accountKeyOf } from '../../nodes/shared/gateway/account';
import { accountNameOf, guardAccountOf, guardScopeOf, normalisedBaseUrl, type GuardAccount } from '../../nodes/shared/gateway/accountScope';
import { StoreUnavailable, type DurableStore } from '../../nodes/shared/store/durableStore';
import { guardScope, memoryRefusal, openGuardScope } from '../../nodes/shared/store/guardScope';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { freshKey } from '../store/contract';
import { guardScopeCases } from '../store/guardScopeCases';

describe('the account scope', () => {
	it('one gateway whatever its spelling: host case, trailing slashes, localhost, default ports; a path is kept', () => {
		const spellings = ['http://127.0.0.1:8080', 'HTTP://127.0.0.1:8080/', 'http://localhost:8080//', ' http://LocalHost:8080 ', 'http://[::1]:8080/'];
		expect(new Set(spellings.map(normalisedBaseUrl))).toEqual(new Set(['http://127.0.0.1:8080']));
		expect(normalisedBaseUrl('https://Gateway.Example.com:443/api/')).toBe('https://gateway.example.com/api');
		expect(normalisedBaseUrl('http://gateway.example.com:80')).toBe('http://gateway.example.com');
		expect(normalisedBaseUrl('https://gateway.example.com:8443')).toBe('https://gateway.example.com:8443');
		expect(normalisedBaseUrl('https://gateway.example.com/API')).not.toBe(normalisedBaseUrl('https://gateway.example.com/api/v2'));
		expect(normalisedBaseUrl(' not a URL/ ')).toBe('not a url');
		expect(normalisedBaseUrl('Not/A URL//')).toBe('not/a url');
	});

	it('is the Account when set (whatever the Base URL and App Code), else the account the App Code opens on the gateway read as one address; never the appCode; the old key is the release before’s', () => {
		const one = guardAccountOf({ baseUrl: 'http://127.0.0.1:8080', appCode: 'code-one', accountName: '' }, 'cred-1');
		const retyped = guardAccountOf({ baseUrl: 'http://LOCALHOST:8080/', appCode: 'code-one' }, 'cred-1');
		expect(one.scope).toBe(retyped.scope);
		expect(one).toEqual({ scope: `gateway:http://127.0.0.1:8080|${accountKeyOf('http://127.0.0.1:8080', 'code-one')}`, legacy: accountKeyOf('http://127.0.0.1:8080', 'code-one'), credential: 'cred-1' });
		expect(JSON.stringify(one)).not.toContain('code-one');
		// Another App Code is another account (a rotation keeps its list through the credential's id: guardScope.ts).
		expect(guardAccountOf({ baseUrl: 'http://127.0.0.1:8080', appCode: 'code-two' }, 'cred-1').scope).not.toBe(one.scope);
		expect(guardAccountOf({ baseUrl: 'http://a.example', appCode: 'c', accountName: 'acme' }).scope).toBe('account:acme');
		expect(guardScopeOf('http://a.example', 'acme', 'c')).toBe(guardScopeOf('http://b.example', 'acme', 'd'));
		expect(guardScopeOf('http://a.example', 'acme', 'c')).not.toBe(guardScopeOf('http://a.example', 'other', 'c'));
	});

	it("the Account field as typed: case and spaces folded, empty when absent", () => {
		expect([' Acme  Prod ', 'ACME\tprod', 'acme prod'].map(accountNameOf)).toEqual(['acme prod', 'acme prod', 'acme prod']);
		expect([undefined, null, '', '   '].map(accountNameOf)).toEqual(['', '', '', '']);
		expect(accountNameOf('a-b_c.d')).toBe('a-b_c.d');
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

describe('the stores the account moved between', () => {
	it('a store still used after the account moved to a Redis refuses, naming the latest Redis', async () => {
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
		// A Redis that replaces it moves the mark on (else a Redis replaced on purpose would lock the account out).
		await guardScope(another, { ...guard }, [file]);
		expect(await file.read([`scope-moved|${guard.scope}`])).toEqual(['10.0.0.6:6379/0']);
		// The same Redis reached as n8n's queue Redis is the same place.
		const queue = redisLike("n8n's queue Redis at 10.0.0.5:6379/0");
		await guardScope(queue, { ...guard }, [file]);
		await expect(openGuardScope(file, { ...guard }, 'send')).rejects.toThrow(/kept in the Redis at 10\.0\.0\.5:6379\/0/);
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

describe('on process memory', () => guardScopeCases(async (clock) => {
	const store = new MemoryStore(clock);
	return { store, process: () => store };
}));

describe('resolving the scope (what it costs, what it keeps)', () => {
	/** A memory store whose reads and writes are counted; `refuseWrites` makes every update fail as a full Redis does. */
	function countedMemory(kind: 'sqlite' | 'redis' = 'sqlite', label = 'the store', refuseWrites = false) {
		const inner = new MemoryStore();
		const seen = { reads: 0, writes: 0 };
		const store: DurableStore = {
			kind,
			label,
			now: async () => await inner.now(),
			read: async (keys) => {
				seen.reads++;
				return await inner.read(keys);
			},
			update: async (keys, decide) => {
				if (refuseWrites) throw new StoreUnavailable(label, 'OOM command not allowed');
				return await inner.update(keys, (values, now) => {
					const decision = decide(values, now);
					seen.writes += decision.writes.length;
					return decision;
				});
			},
		};
		return { store, seen };
	}
	const account = (credential?: string): GuardAccount => ({ scope: freshKey('scope'), legacy: freshKey('legacy'), ...(credential ? { credential } : {}) });

	it('writes the links once; a later run only reads them; one run resolves once; a failure is asked again', async () => {
		const { store, seen } = countedMemory();
		const first = account(freshKey('credential'));
		await guardScope(store, first);
		expect(seen.writes).toBe(2);
		const again = { ...first };
		expect((await guardScope(store, again)).former).toEqual([first.legacy]);
		expect(seen.writes).toBe(2);
		const reads = seen.reads;
		await guardScope(store, again);
		expect(seen.reads).toBe(reads);
		// Without a credential id the release before's key is linked too, and written once.
		const bare = account();
		await guardScope(store, bare);
		await guardScope(store, { ...bare });
		expect(seen.writes).toBe(3);
		const failing = { ...countedMemory('sqlite', 'x', true), account: account('c') };
		await expect(guardScope(failing.store, failing.account)).resolves.toMatchObject({ former: [failing.account.legacy] });
	});

	it('a store that refuses writes still counts every scope it read', async () => {
		const { store } = countedMemory('sqlite', 'the full store', true);
		const guard = account(freshKey('credential'));
		expect(await guardScope(store, guard)).toEqual({ store, earlier: [], scope: guard.scope, former: [guard.legacy] });
	});

	it('an earlier store: its links count, its mark is written once, and the store in use is named by its place', async () => {
		const { store: file, seen } = countedMemory('sqlite', 'the SQLite file /x.sqlite');
		const guard = account(freshKey('credential'));
		await guardScope(file, guard);
		const redis = countedMemory('redis', "the credential's Redis at 10.0.0.7:6379/0").store;
		expect((await guardScope(redis, { ...guard }, [file])).former).toEqual([guard.legacy]);
		const writes = seen.writes;
		expect(await file.read(['scope-moved|' + guard.scope])).toEqual(['10.0.0.7:6379/0']);
		await guardScope(redis, { ...guard }, [file]);
		expect(seen.writes).toBe(writes);
	});

	it('process memory refuses a send only while a store file exists, naming it', () => {
		const folder = mkdtempSync(join(tmpdir(), 'dgw-scope-'));
		const file = join(folder, 'store.sqlite');
		const saved = process.env.DATA_GATEWAY_STORE_FILE;
		process.env.DATA_GATEWAY_STORE_FILE = file;
		try {
			const memory = new MemoryStore();
			expect(memoryRefusal(memory, 'send')).toBeUndefined();
			writeFileSync(file, '');
			expect(memoryRefusal(memory, 'send')).toBe(
				`An opt-out list may be kept in the SQLite file that this Node cannot read (${file}): set "Shared Redis URL for Limits and Send Records" in the credential, or run n8n on Node 22.13 or later (as n8n 2.x does), which keeps them in an SQLite file`,
			);
			expect(memoryRefusal(memory, 'list')).toMatch(/, and this n8n has only this n8n process's memory:/);
		} finally {
			if (saved === undefined) delete process.env.DATA_GATEWAY_STORE_FILE;
			else process.env.DATA_GATEWAY_STORE_FILE = saved;
			rmSync(folder, { recursive: true, force: true });
		}
	});
});

