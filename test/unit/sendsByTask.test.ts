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
const pendingIds = async (account = 'acct', since = now - 24 * HOUR, until = now) =>
	(await listPendingSends(store, account, since, until, 100)).sends.map((record) => record.taskId);

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

	it('settled task IDs leave the minute list as it is read, so the lists shrink as reports arrive', async () => {
		await recordSends(store, 'acct', [send('T1'), send('T2')]);
		await markReported(store, [{ taskId: 'T1', status: -1 }], 'trigger');
		expect(await pendingIds()).toEqual(['T2']);
		const listKey = `delivery:sent:acct:${Math.floor(now / 60_000)}`;
		expect(JSON.parse((await store.read([listKey]))[0] as string)).toEqual(['T2']);
	});

	it('a damaged record reads as unknown instead of failing the report', async () => {
		await store.update(['delivery:task:T9'], () => ({ writes: [{ key: 'delivery:task:T9', value: '{not json' }], result: undefined }));
		expect((await readSends(store, ['T9'])).get('T9')).toBeUndefined();
		expect((await markReported(store, [{ taskId: 'T9', status: 1 }], 'trigger')).get('T9')).toEqual({ before: undefined, first: true });
	});
});
