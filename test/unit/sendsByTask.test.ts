import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { KEEP_SENDS_MS, listPendingSends, markReported, readSends, recordSends } from '../../nodes/shared/store/sendsByTask';

/** The sends-by-task records on the memory store, with a clock the test moves. */
const HOUR = 3_600_000;
let now: number;
let store: MemoryStore;
beforeEach(() => {
	now = Date.UTC(2026, 10, 23, 8, 30);
	store = new MemoryStore(() => now);
});

const send = (taskId: string, reference: string | null = null) => ({ taskId, reference, workflowId: 'w1', executionId: 'e1' });
const pendingIds = async (account = 'acct', since = now - 24 * HOUR, until = now, max = 100) =>
	(await listPendingSends(store, account, since, until, max)).sends.map((record) => record.taskId);

describe('sends by task ID', () => {
	it('a report that reached the trigger before its send was recorded keeps its mark: the send is not pending', async () => {
		const marked = await markReported(store, [{ taskId: 'T1', status: 1 }], 'trigger');
		expect(marked.get('T1')).toEqual({ before: undefined, first: true });
		await recordSends(store, 'acct', [send('T1', 'order-1'), send('T2', 'order-2')]);
		expect(await pendingIds()).toEqual(['T2']);
		expect((await readSends(store, ['T1'])).get('T1')).toMatchObject({ reference: 'order-1', reportedBy: 'trigger', reportedStatus: 1 });
	});

	it('a final status is claimed once, whoever sees it first', async () => {
		await recordSends(store, 'acct', [send('T1')]);
		const [first, second] = await Promise.all([
			markReported(store, [{ taskId: 'T1', status: 1 }], 'checkPending'),
			markReported(store, [{ taskId: 'T1', status: 1 }], 'trigger'),
		]);
		expect([first.get('T1')?.first, second.get('T1')?.first].sort()).toEqual([false, true]);
	});

	it('lists only the credential\'s own sends within the window, oldest first, and forgets them after 72 hours', async () => {
		await recordSends(store, 'acct', [send('T1')]);
		now += 2 * HOUR;
		await recordSends(store, 'acct', [send('T2')]);
		await recordSends(store, 'other', [send('T3')]);
		expect(await pendingIds()).toEqual(['T1', 'T2']);
		expect(await pendingIds('acct', now - HOUR)).toEqual(['T2']);
		expect(await pendingIds('acct', now - 24 * HOUR, now - HOUR)).toEqual(['T1']);
		expect(await pendingIds('other')).toEqual(['T3']);

		now += KEEP_SENDS_MS;
		expect((await readSends(store, ['T1', 'T2'])).get('T2')).toBeUndefined();
		expect(await pendingIds('acct', now - KEEP_SENDS_MS - 3 * HOUR)).toEqual([]);
	});

	it('a send recorded again (Retry On Fail) keeps its first time', async () => {
		await recordSends(store, 'acct', [send('T1', 'r')]);
		const sentAt = (await readSends(store, ['T1'])).get('T1')?.sentAt;
		now += 1000;
		await recordSends(store, 'acct', [send('T1', 'r')]);
		expect((await readSends(store, ['T1'])).get('T1')?.sentAt).toBe(sentAt);
		expect(await pendingIds()).toEqual(['T1']);
	});

	it("settled task IDs leave the minute's index as it is read, so its parts shrink as reports arrive", async () => {
		await recordSends(store, 'acct', [send('T1'), send('T2')]);
		await markReported(store, [{ taskId: 'T1', status: -1 }], 'trigger');
		expect(await pendingIds()).toEqual(['T2']);
		const partKey = `delivery:sent:acct:${Math.floor(now / 60_000)}:0`;
		expect(JSON.parse((await store.read([partKey]))[0] as string)).toEqual(['T2']);
	});

	it("a minute's index grows by parts of at most 200 task IDs, and each save rewrites only the last part", async () => {
		const minute = Math.floor(now / 60_000);
		const written: string[][] = [];
		const counting: DurableStore = { ...store, kind: store.kind, label: store.label, now: () => store.now(), read: (keys) => store.read(keys), update: (keys, decide) => store.update(keys, (values, at) => {
			const decision = decide(values, at);
			written.push(decision.writes.filter((write) => write.key.startsWith('delivery:sent:')).map((write) => write.value ?? ''));
			return decision;
		}) };
		const ids = Array.from({ length: 450 }, (_, index) => `P${index}`);
		for (let start = 0; start < ids.length; start += 30) await recordSends(counting, 'acct', ids.slice(start, start + 30).map((id) => send(id)));
		const parts = await store.read([0, 1, 2, 3].map((part) => `delivery:sent:acct:${minute}:${part}`));
		expect(parts.map((part) => (part === undefined ? 0 : (JSON.parse(part) as string[]).length))).toEqual([180, 180, 90, 0]);
		expect(await store.read([`delivery:parts:acct:${minute}`])).toEqual(['3']);
		// Each save that held wrote one part, never more than 200 IDs (a save on a stale guess writes nothing and tries again).
		expect(written.filter((writes) => writes.length > 0).every((writes) => writes.length === 1 && (JSON.parse(writes[0]) as string[]).length <= 200)).toBe(true);
		expect((await pendingIds('acct', now - HOUR, now, 1000)).sort()).toEqual([...ids].sort());
	});

	it('saves at once, each on a stale guess of the last part, still put every task ID in the index', async () => {
		const ids = Array.from({ length: 240 }, (_, index) => `Q${index}`);
		await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(async (group) => await recordSends(store, 'acct', ids.slice(group * 30, group * 30 + 30).map((id) => send(id)))));
		expect((await pendingIds('acct', now - HOUR, now, 1000)).sort()).toEqual([...ids].sort());
	});

	it('a damaged record reads as unknown instead of failing the report', async () => {
		await store.update(['delivery:task:T9'], () => ({ writes: [{ key: 'delivery:task:T9', value: '{not json' }], result: undefined }));
		expect((await readSends(store, ['T9'])).get('T9')).toBeUndefined();
		expect((await markReported(store, [{ taskId: 'T9', status: 1 }], 'trigger')).get('T9')).toEqual({ before: undefined, first: true });
	});
});
