/**
 * Issue 41 part A's cases on one store kind: the account's links (store/guardScope.ts), the opt-out
 * list over its scopes and stores (store/optOutList.ts), the telephone quota the same way. Run on
 * every store by test/store/guardScope.test.ts, and on process memory by the mutation run's
 * test/unit/account-scope.test.ts.
 */
import type { GuardAccount } from '../../nodes/shared/gateway/accountScope';
import { countCalls, reserveCalls } from '../../nodes/shared/lookups/telephoneQuota';
import { guardScope, plainScope, type GuardScope } from '../../nodes/shared/store/guardScope';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { changeOptOuts, optOutKey, readOptOuts } from '../../nodes/shared/store/optOutList';
import type { StoreOpener } from '../harness/recordStores';
import { freshKey } from './contract';

export function guardScopeCases(open: StoreOpener): void {
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
}
