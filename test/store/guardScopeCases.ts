/**
 * Issue 41 part A's cases on one store kind: the account's links (store/guardScope.ts), the opt-out
 * list over its scopes and stores (store/optOutList.ts), the telephone quota the same way. Run on
 * every store by test/store/guardScope.test.ts, and on process memory by the mutation run's
 * test/unit/account-scope.test.ts.
 */
import type { GuardAccount } from '../../nodes/shared/gateway/accountScope';
import { countCalls, reserveCalls } from '../../nodes/shared/lookups/telephoneQuota';
import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { guardScope, plainScope, type GuardScope } from '../../nodes/shared/store/guardScope';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { changeOptOuts, optOutKey, readOptOuts } from '../../nodes/shared/store/optOutList';
import type { StoreOpener } from '../harness/recordStores';
import { freshKey } from './contract';

/** The store, with what callers asked of it counted: reads, each update's keys, the writes decided. */
const isSizeKey = (key: string) => key.startsWith('opt-out-size|');

function counted(store: DurableStore) {
	const seen = { reads: 0, updates: [] as number[], writes: 0 };
	const wrapped: DurableStore = {
		kind: store.kind,
		label: store.label,
		now: async () => await store.now(),
		read: async (keys) => {
			seen.reads++;
			return await store.read(keys);
		},
		update: async (keys, decide, guess) => {
			// The list's entries only: its size (optOutSizeKey, for Usage → Get) changes beside them.
			seen.updates.push(keys.filter((key) => !isSizeKey(key)).length);
			return await store.update(
				keys,
				(values, now) => {
					const decision = decide(values, now);
					seen.writes += decision.writes.filter((write) => !isSizeKey(write.key)).length;
					return decision;
				},
				guess,
			);
		},
	};
	return { store: wrapped, seen };
}

/** A time, not the 0 an unreadable value lists a number with. */
const A_TIME = Date.UTC(2026, 0, 1);

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

	it('the earliest time of a number listed twice, under two scopes or in two earlier stores; an Add leaves the earlier stores as they are', async () => {
		const { store } = await open(() => clock);
		const [first, second] = [new MemoryStore(() => clock), new MemoryStore(() => clock)];
		const [scope, former] = [freshKey('scope'), freshKey('former')];
		await changeOptOuts(plainScope(store, former), ['13900000011'], 'add');
		await changeOptOuts(plainScope(second, scope), ['13900000012'], 'add');
		const [formerAt, secondAt] = [(await readOptOuts(plainScope(store, former), ['13900000011'])).get('13900000011'), clock];
		expect(formerAt).toBeGreaterThan(A_TIME);
		clock += 60_000;
		await changeOptOuts(plainScope(store, scope), ['13900000011', '13900000012'], 'add');
		await changeOptOuts(plainScope(first, scope), ['13900000012'], 'add');
		const guard: GuardScope = { store, earlier: [first, second], scope, former: [former] };
		expect(await readOptOuts(guard, ['13900000011', '13900000012'])).toEqual(new Map([['13900000011', formerAt], ['13900000012', secondAt]]));
		await changeOptOuts(guard, ['13900000012'], 'add');
		expect((await second.read([optOutKey(scope, '13900000012')]))[0]).toBe(String(secondAt));
	});

	it('reads nothing for no number; a second Add writes nothing; a removal deletes only what lists the number, also where only a former scope did', async () => {
		const { store: inner } = await open(() => clock);
		const { store, seen } = counted(inner);
		const [scope, former] = [freshKey('scope'), freshKey('former')];
		const guard: GuardScope = { store, earlier: [], scope, former: [former] };
		expect(await readOptOuts(guard, [])).toEqual(new Map());
		expect(seen.reads).toBe(0);
		await changeOptOuts(guard, ['13900000021'], 'add');
		expect(seen.writes).toBe(1);
		await changeOptOuts(guard, ['13900000021', '13900000021'], 'add');
		expect(seen.writes).toBe(1);
		await changeOptOuts(plainScope(inner, former), ['13900000022'], 'add');
		await changeOptOuts(guard, ['13900000021', '13900000022', '13900000023'], 'remove');
		expect(seen.writes).toBe(1 + 2);
		expect(await readOptOuts(guard, ['13900000021', '13900000022'])).toEqual(new Map());
	});

	it('a removal in an earlier store deletes only what is there', async () => {
		const { store } = await open(() => clock);
		const { store: earlier, seen } = counted(new MemoryStore(() => clock));
		const scope = freshKey('scope');
		await changeOptOuts(plainScope(earlier, scope), ['13900000031'], 'add');
		expect(seen.writes).toBe(1);
		await changeOptOuts({ store, earlier: [earlier], scope, former: [] }, ['13900000031', '13900000032'], 'remove');
		expect(seen.writes).toBe(2);
		expect(await earlier.read([optOutKey(scope, '13900000031')])).toEqual([undefined]);
	});

	it('adds many numbers 100 to a store update, each listed at a real time', async () => {
		const { store: inner } = await open(() => clock);
		const { store, seen } = counted(inner);
		const scope = freshKey('scope');
		const phones = Array.from({ length: 250 }, (_, index) => `1390001${String(index).padStart(4, '0')}`);
		await changeOptOuts(plainScope(store, scope), phones, 'add');
		expect(seen.updates).toEqual([100, 100, 50]);
		await changeOptOuts(plainScope(store, scope), phones.slice(0, 200), 'remove');
		expect(seen.updates).toEqual([100, 100, 50, 100, 100]);
		await changeOptOuts(plainScope(store, scope), phones.slice(0, 200), 'add');
		const listed = await readOptOuts(plainScope(store, scope), phones);
		expect(listed.size).toBe(250);
		expect(Math.min(...listed.values())).toBeGreaterThan(A_TIME);
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
