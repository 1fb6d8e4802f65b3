import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { KEEP_SENDS_MS, listPendingSends, markChecked, markReported, readSends, recordSends } from '../../nodes/shared/store/sendsByTask';

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

describe('two accounts given the same task ID', () => {
	it('each keeps its own reference and report mark; a report naming no account is tied to neither', async () => {
		await recordSends(store, 'acctA', [send('T1', 'from-A')]);
		await recordSends(store, 'acctB', [send('T1', 'from-B')]);
		expect((await readSends(store, ['T1'], 'acctA')).get('T1')).toMatchObject({ reference: 'from-A' });
		expect((await readSends(store, ['T1'], 'acctB')).get('T1')).toMatchObject({ reference: 'from-B' });

		// The SMS Trigger: which account's send it is cannot be told, so nothing is used or marked.
		expect((await readSends(store, ['T1'])).get('T1')).toBeUndefined();
		expect((await markReported(store, [{ taskId: 'T1', status: 1 }], 'trigger')).get('T1')).toEqual({ before: undefined, first: false, ambiguous: true });
		expect(await pendingIds('acctA')).toEqual(['T1']);

		const markedB = (await markReported(store, [{ taskId: 'T1', status: 1 }], 'checkPending', 'acctB')).get('T1');
		expect(markedB).toMatchObject({ first: true, before: { reference: 'from-B' } });
		expect(await pendingIds('acctB')).toEqual([]);
		expect(await pendingIds('acctA')).toEqual(['T1']);
		expect((await markReported(store, [{ taskId: 'T1', status: -1 }], 'sendAndCheck', 'acctA')).get('T1')).toMatchObject({ first: true, before: { reference: 'from-A' } });
	});

	it('the only account that sent a task ID gets the trigger\'s report', async () => {
		await recordSends(store, 'acctA', [send('T2', 'from-A')]);
		expect((await markReported(store, [{ taskId: 'T2', status: 1 }], 'trigger')).get('T2')).toMatchObject({ first: true, before: { reference: 'from-A' } });
		expect(await pendingIds('acctA')).toEqual([]);
		// Another account given the same ID later is not taken for reported.
		await recordSends(store, 'acctB', [send('T2', 'from-B')]);
		expect(await pendingIds('acctB')).toEqual(['T2']);
	});

	it('a report that came before any send is taken over by the first account to record the task, and by no other', async () => {
		await markReported(store, [{ taskId: 'T3', status: 1 }], 'trigger');
		await recordSends(store, 'acctA', [send('T3', 'from-A')]);
		await recordSends(store, 'acctB', [send('T3', 'from-B')]);
		expect(await pendingIds('acctA')).toEqual([]);
		expect(await pendingIds('acctB')).toEqual(['T3']);
	});
});

describe('records written before sends were kept per account', () => {
	const legacy = (taskId: string, fields: object) =>
		store.update([`delivery:task:${taskId}`], () => ({ writes: [{ key: `delivery:task:${taskId}`, value: JSON.stringify({ taskId, keepUntil: now + KEEP_SENDS_MS, ...fields }), ttlMs: KEEP_SENDS_MS }], result: undefined }));

	it("are found by the trigger and by the account's Check Pending, for their 72 hours", async () => {
		await recordSends(store, 'acct', [send('L1', 'old-1'), send('L2', 'old-2')]);
		await legacy('L1', { reference: 'old-1', workflowId: 'w1', executionId: 'e1', sentAt: now });
		await legacy('L2', { reference: 'old-2', workflowId: 'w1', executionId: 'e1', sentAt: now });
		expect((await readSends(store, ['L1'])).get('L1')).toMatchObject({ reference: 'old-1' });
		expect((await markReported(store, [{ taskId: 'L1', status: 1 }], 'trigger')).get('L1')).toMatchObject({ first: true, before: { reference: 'old-1' } });
		expect(await pendingIds()).toEqual(['L2']);
		expect((await markReported(store, [{ taskId: 'L2', status: 1 }], 'checkPending', 'acct')).get('L2')).toMatchObject({ first: true, before: { reference: 'old-2' } });
		expect(await pendingIds()).toEqual([]);
	});

	it('a report marked before the change keeps the send from being listed', async () => {
		await recordSends(store, 'acct', [send('L3', 'r')]);
		await legacy('L3', { reference: 'r', sentAt: now, reportedAt: now, reportedBy: 'trigger', reportedStatus: 1 });
		expect(await pendingIds()).toEqual([]);
	});

	it('the same send recorded again (a retry across the change) moves into its account\'s entry', async () => {
		await legacy('L4', { reference: 'r', workflowId: 'w1', executionId: 'e1', sentAt: now - 1000 });
		await recordSends(store, 'acct', [send('L4', 'r')]);
		expect((await readSends(store, ['L4'])).get('L4')).toMatchObject({ reference: 'r', sentAt: now - 1000 });
	});
});

describe('Check Pending takes turns', () => {
	it('a message asked about moves to the back: with more still sending than a run asks about, every message is asked about in turn', async () => {
		for (const taskId of ['S1', 'S2', 'S3']) {
			await recordSends(store, 'acct', [send(taskId)]);
			now += 1000;
		}
		const run = async () => (await listPendingSends(store, 'acct', now - HOUR, now, 2)).sends.map((record) => record.taskId);
		expect(await run()).toEqual(['S1', 'S2']);
		await markChecked(store, 'acct', ['S1', 'S2']);
		now += 1000;
		expect(await run()).toEqual(['S3', 'S1']);
		await markChecked(store, 'acct', ['S3', 'S1']);
		now += 1000;
		// S2 waited longest; S1 and S3 were asked at the same time, the older first.
		expect(await run()).toEqual(['S2', 'S1']);
	});

	it('marks only the account\'s own pending send', async () => {
		await recordSends(store, 'acctA', [send('S4')]);
		await recordSends(store, 'acctB', [send('S4')]);
		await markChecked(store, 'acctA', ['S4']);
		expect((await readSends(store, ['S4'], 'acctA')).get('S4')?.checkedAt).toBe(now);
		expect((await readSends(store, ['S4'], 'acctB')).get('S4')?.checkedAt).toBeUndefined();
	});
});
