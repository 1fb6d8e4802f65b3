/**
 * How store/guardScope.ts links an account's scopes, on process memory: what it reads and writes
 * (the links, the scope a credential used last, the moved mark in an earlier store), that nothing is
 * written when nothing is new, and which scopes still count. The same over every store, through
 * the opt-out list and the ledger: test/store/guardScopeCases.ts.
 */
import type { GuardAccount } from '../../nodes/shared/gateway/accountScope';
import { guardScope, plainScope, scopesOf } from '../../nodes/shared/store/guardScope';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { recordUpdates } from '../harness/recordedUpdates';

/** A memory store counting its updates and the writes they made. */
function countingStore(label?: string) {
	const store = new MemoryStore();
	if (label !== undefined) Object.defineProperty(store, 'label', { value: label });
	const { writes, updates } = recordUpdates(store);
	return { store, updates, writes: () => writes.flat().length };
}

const raw = async (store: MemoryStore, key: string) => (await store.read([key]))[0];
const account = (scope: string, credential?: string): GuardAccount => ({ scope, legacy: `legacy of ${scope}`, ...(credential === undefined ? {} : { credential }) });

describe("an account's scope", () => {
	it("on a credential's first run links the release before's key and remembers the scope; on its next run writes nothing", async () => {
		const { store, updates, writes } = countingStore();
		const first = await guardScope(store, account('account:a', 'cred-1'));
		expect(first).toStrictEqual({ store, earlier: [], scope: 'account:a', former: ['legacy of account:a'] });
		expect(await raw(store, 'scope-links|account:a')).toBe(JSON.stringify(['legacy of account:a']));
		expect(await raw(store, 'credential-scope|cred-1')).toBe('account:a');
		expect([updates(), writes()]).toEqual([1, 2]);
		// A new run (a new GuardAccount): everything is linked already.
		expect((await guardScope(store, account('account:a', 'cred-1'))).former).toEqual(['legacy of account:a']);
		expect(updates()).toBe(1);
	});

	it('without a credential (outside the engine) links the legacy key once, and writes no credential key', async () => {
		const { store, updates, writes } = countingStore();
		expect((await guardScope(store, account('account:a'))).former).toEqual(['legacy of account:a']);
		expect([updates(), writes()]).toEqual([1, 1]);
		expect((await guardScope(store, account('account:a'))).former).toEqual(['legacy of account:a']);
		expect(updates()).toBe(1);
	});

	it('when a credential changes scope, links its earlier scope and what that scope linked, not the new legacy key', async () => {
		const { store, writes } = countingStore();
		await guardScope(store, account('gateway:old', 'cred-1'));
		const moved = await guardScope(store, account('account:new', 'cred-1'));
		expect(moved.former).toEqual(['gateway:old', 'legacy of gateway:old']);
		expect(await raw(store, 'scope-links|account:new')).toBe(JSON.stringify(['gateway:old', 'legacy of gateway:old']));
		expect(await raw(store, 'credential-scope|cred-1')).toBe('account:new');
		expect(writes()).toBe(4);
		// And back: the scope it used last is linked; its own scope is never among its former ones.
		const back = await guardScope(store, account('gateway:old', 'cred-1'));
		expect(back.former).toEqual(['legacy of gateway:old', 'account:new']);
		expect(scopesOf(back)).toEqual(['gateway:old', 'legacy of gateway:old', 'account:new']);
	});

	it("keeps each credential's last scope, so that a scope it moved through stays linked when it moves on", async () => {
		const { store, writes } = countingStore();
		await guardScope(store, account('account:A', 'cred-1'));
		const before = writes();
		// A second credential on a scope already linked: only its own key is written.
		await guardScope(store, account('account:A', 'cred-2'));
		expect(writes() - before).toBe(1);
		expect(await raw(store, 'scope-links|account:A')).toBe(JSON.stringify(['legacy of account:A']));
		// Both move to B; the second finds everything linked already, yet its key must follow it to B.
		await guardScope(store, account('account:B', 'cred-1'));
		await guardScope(store, account('account:B', 'cred-2'));
		expect(await raw(store, 'credential-scope|cred-2')).toBe('account:B');
		// From B to C: B (where opt-outs were added meanwhile) counts under C.
		expect((await guardScope(store, account('account:C', 'cred-2'))).former).toEqual(['account:B', 'account:A', 'legacy of account:A']);
	});

	it('reads a damaged links value as none', async () => {
		for (const damaged of ['not json', '{"a":1}', '[1,"scope:kept",null]', '']) {
			const store = new MemoryStore();
			await store.update(['scope-links|account:a'], () => ({ writes: [{ key: 'scope-links|account:a', value: damaged }], result: undefined }));
			const former = (await guardScope(store, account('account:a'))).former;
			expect(former).toEqual(damaged.includes('scope:kept') ? ['scope:kept', 'legacy of account:a'] : ['legacy of account:a']);
		}
	});

	it("reads an earlier store's links, marks there once where the guardrails went, and counts its scopes too", async () => {
		const earlier = countingStore();
		await guardScope(earlier.store, account('gateway:old', 'cred-1'));
		const { store } = countingStore('the credential’s Redis at 127.0.0.1:6390/0');
		const scope = await guardScope(store, account('account:a', 'cred-1'), [earlier.store]);
		expect(scope.former).toEqual(['legacy of account:a', 'gateway:old', 'legacy of gateway:old']);
		expect(scope.movedTo).toBeUndefined();
		expect(await raw(earlier.store, 'scope-moved|account:a')).toBe('127.0.0.1:6390/0');
		const updatesThen = earlier.updates();
		await guardScope(store, account('account:a', 'cred-1'), [earlier.store]);
		expect(earlier.updates()).toBe(updatesThen);
		// A process still on the earlier store learns where the guardrails went.
		expect((await guardScope(earlier.store, account('account:a', 'cred-2'))).movedTo).toBe('127.0.0.1:6390/0');
	});

	it('is resolved once per run and store; a failure is not kept', async () => {
		const { store, updates } = countingStore();
		const run = account('account:a', 'cred-1');
		const read = jest.spyOn(store, 'read').mockRejectedValueOnce(new Error('store down'));
		await expect(guardScope(store, run)).rejects.toThrow('store down');
		const scope = await guardScope(store, run);
		expect(await guardScope(store, run)).toBe(scope);
		expect(updates()).toBe(1);
		read.mockRestore();
		expect(plainScope(store, 'x')).toEqual({ store, earlier: [], scope: 'x', former: [] });
	});
});
