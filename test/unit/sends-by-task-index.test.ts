/**
 * Delivery records by task (nodes/shared/store/sendsByTask.ts) on process memory, step by step:
 * the minute's index (its parts, their lifetime, a damaged part or count, the guess of the last
 * part, saves that keep failing), where a mark lands when an account's send, another account's or
 * a send from before entries holds the task ID, and what a listing leaves in the store. The
 * promises as a user meets them: test/unit/sendsByTask.test.ts; on every store: test/store/*.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IExecuteFunctions } from 'n8n-workflow';

import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { isDeliveryKey, isFinalStatus, KEEP_SENDS_MS, listPendingSends, markChecked, markReported, openDeliveryStore, readSends, recordSends } from '../../nodes/shared/store/sendsByTask';
import { forgetOpenStores } from '../../nodes/shared/testing';
import { recordUpdates } from '../harness/recordedUpdates';

const HOUR = 3_600_000;
const MINUTE = 60_000;
/** 08:30:00.000 UTC: the start of a minute. */
const T0 = Date.UTC(2026, 10, 23, 8, 30);
let now: number;
let store: MemoryStore;
beforeEach(() => {
	now = T0;
	store = new MemoryStore(() => now);
});

const send = (taskId: string, reference: string | null = null, executionId = 'e1', workflowId = 'w1') => ({ taskId, reference, workflowId, executionId });
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${index}`);
const sendsOf = (taskIds: string[]) => taskIds.map((taskId) => send(taskId));
const minuteOf = (at: number) => Math.floor(at / MINUTE);
const partKey = (account: string, at: number, part: number) => `delivery:sent:${account}:${minuteOf(at)}:${part}`;
const countKey = (account: string, at: number) => `delivery:parts:${account}:${minuteOf(at)}`;
const read = async (key: string) => (await store.read([key]))[0];
const part = async (account: string, at: number, index: number) => JSON.parse((await read(partKey(account, at, index))) ?? '[]') as unknown[];
const stage = async (key: string, value: string) => await store.update([key], () => ({ writes: [{ key, value, ttlMs: KEEP_SENDS_MS }], result: undefined }));
/** A task's record as versions before entries per account wrote it. */
const legacy = async (taskId: string, fields: object) => await stage(`delivery:task:${taskId}`, JSON.stringify({ taskId, keepUntil: now + KEEP_SENDS_MS, ...fields }));
const pending = async (account = 'acct', since = now - 24 * HOUR, until = now, max = 1_000) => await listPendingSends(store, account, since, until, max);
const pendingIds = async (account = 'acct', since?: number, until?: number) => (await pending(account, since, until)).sends.map((record) => record.taskId);

describe("the minute's index", () => {
	it('lives as long as the records of its last minute: to the end of the minute plus 72 hours', async () => {
		now = T0 + 30_000;
		await recordSends(store, 'acct', [send('T1')]);
		now = T0 + MINUTE + KEEP_SENDS_MS - 1;
		expect(await read(countKey('acct', T0))).toBe('1');
		expect(await part('acct', T0, 0)).toEqual(['T1']);
		now += 1;
		expect(await store.read([countKey('acct', T0), partKey('acct', T0, 0)])).toEqual([undefined, undefined]);
	});

	it('a longer repeat window keeps the records as long; a shorter one keeps them 72 hours', async () => {
		await recordSends(store, 'acct', [send('LONG')], 100 * HOUR);
		await recordSends(store, 'acct', [send('SHORT')], HOUR);
		now = T0 + 99 * HOUR;
		expect((await readSends(store, ['LONG'], 'acct')).get('LONG')).toMatchObject({ taskId: 'LONG', sentAt: T0 });
		now = T0 + 71 * HOUR;
		expect((await readSends(store, ['SHORT'], 'acct')).get('SHORT')).toMatchObject({ sentAt: T0 });
	});

	it('nothing to record writes nothing', async () => {
		const { updates } = recordUpdates(store);
		await recordSends(store, 'acct', []);
		await markReported(store, [], 'trigger');
		await markChecked(store, 'acct', []);
		expect(updates()).toBe(0);
		expect(store.size).toBe(0);
	});

	it('a part takes up to 200 task IDs; a first save of more keeps them in one part', async () => {
		await recordSends(store, 'acct', sendsOf(ids('A', 150)));
		await recordSends(store, 'acct', sendsOf(ids('B', 50)));
		expect(await part('acct', T0, 0)).toHaveLength(200);
		await recordSends(store, 'acct', sendsOf(ids('C', 1)));
		expect(await part('acct', T0, 1)).toEqual(['C0']);
		now += MINUTE;
		await recordSends(store, 'acct', sendsOf(ids('D', 250)));
		expect(await part('acct', now, 0)).toHaveLength(250);
		expect(await store.read([countKey('acct', T0), countKey('acct', now)])).toEqual(['2', '1']);
	});

	it("a damaged part or count reads as empty: the next save writes a clean part, and the listing still finds every send", async () => {
		await stage(partKey('acct', T0, 0), '{not json');
		await recordSends(store, 'acct', [send('T1')]);
		expect(await part('acct', T0, 0)).toEqual(['T1']);
		for (const damaged of ['{"ids":["X"]}', '["T1",5,null,{"id":"Y"}]']) {
			await stage(partKey('acct', T0, 0), damaged);
			await recordSends(store, 'acct', [send('T2')]);
			expect(await part('acct', T0, 0)).toEqual([...(damaged.startsWith('[') ? ['T1'] : []), 'T2']);
		}
		// A count that is no whole number of parts (1e300 would name parts that cannot be listed).
		const listed = ['T1', 'T2'];
		for (const damaged of ['1e300', '-4', 'lots']) {
			await stage(countKey('acct', T0), damaged);
			expect(await pendingIds()).toEqual([]);
			await recordSends(store, 'acct', [send(`after ${damaged}`)]);
			listed.push(`after ${damaged}`);
			expect(await pendingIds()).toEqual(listed);
		}
	});

	it('a save names the last part in one update, per account, and in a new minute starts again at part 0', async () => {
		const { updates } = recordUpdates(store);
		await recordSends(store, 'acctA', sendsOf(ids('A', 200)));
		await recordSends(store, 'acctB', sendsOf(ids('B', 200)));
		await recordSends(store, 'acctA', sendsOf(['A200']));
		await recordSends(store, 'acctB', sendsOf(['B200']));
		// Both accounts' guesses are part 1 now: each save that follows is one update.
		const before = updates();
		await recordSends(store, 'acctA', sendsOf(['A201']));
		await recordSends(store, 'acctB', sendsOf(['B201']));
		expect(updates() - before).toBe(2);
		expect(await part('acctA', T0, 1)).toEqual(['A200', 'A201']);
		now += MINUTE;
		await recordSends(store, 'acctA', sendsOf(['A202']));
		expect(updates() - before).toBe(3);
		expect(await part('acctA', now, 0)).toEqual(['A202']);
	});

	it("forgets its guesses when 1,000 accounts were seen, not before: a save after that costs one update more", async () => {
		const { updates } = recordUpdates(store);
		const atPartOne = async (account: string) => {
			await recordSends(store, account, sendsOf(ids(account, 200)));
			await recordSends(store, account, sendsOf([`${account} more`]));
		};
		await atPartOne('first');
		await atPartOne('second');
		const saveOf = async (account: string) => {
			const before = updates();
			await recordSends(store, account, sendsOf([`${account} ${before}`]));
			return updates() - before;
		};
		// A new account does not make the others' guesses go.
		expect(await saveOf('new 0')).toBe(1);
		expect(await saveOf('first')).toBe(1);
		for (let account = 1; account < 997; account++) await recordSends(store, `new ${account}`, [send(`n${account}`)]);
		// 999 accounts: the 1,000th is new and kept with the rest.
		expect(await saveOf('new 997')).toBe(1);
		// 1,000 seen: a known account's save keeps them all.
		expect(await saveOf('first')).toBe(1);
		expect(await saveOf('second')).toBe(1);
		// A new account now makes them go: the next save of part 1 first tries part 0.
		expect(await saveOf('new 998')).toBe(1);
		expect(await saveOf('second')).toBe(2);
		expect(await saveOf('second')).toBe(1);
	});

	it('a save whose guess of the last part keeps being wrong (others start parts at each try) gives up after 20 tries, naming the minute', async () => {
		let count = 1;
		const racing: DurableStore = {
			kind: store.kind,
			label: store.label,
			now: async () => await store.now(),
			read: async (keys) => await store.read(keys),
			update: async (keys, decide) => {
				// Another process started a part just before this try.
				const key = countKey('acct', now);
				await stage(key, String((count += 1)));
				return await store.update(keys, decide);
			},
		};
		const { updates } = recordUpdates(store);
		await expect(recordSends(racing, 'acct', [send('T1')])).rejects.toThrow("the delivery records' index of 2026-11-23T08:30 kept changing under this save; it was tried 20 times");
		// 20 tries, each after another process's write.
		expect(updates()).toBe(40);
		expect(await readSends(store, ['T1'], 'acct')).toEqual(new Map([['T1', undefined]]));
	});
});

describe('where a send and its report land', () => {
	it("a report seen by an account's node before any send was recorded stays that account's: another account's send of the ID is pending", async () => {
		const marked = await markReported(store, [{ taskId: 'T1', status: 1 }], 'sendAndCheck', 'acctA');
		expect(marked.get('T1')).toEqual({ before: undefined, first: true });
		await recordSends(store, 'acctB', [send('T1', 'from-B')]);
		expect(await pendingIds('acctB')).toEqual(['T1']);
		await recordSends(store, 'acctA', [send('T1', 'from-A')]);
		expect(await pendingIds('acctA')).toEqual([]);
		expect((await readSends(store, ['T1'], 'acctA')).get('T1')).toMatchObject({ reference: 'from-A', reportedBy: 'sendAndCheck', reportedStatus: 1 });
	});

	it("hands back the send it marked, with the scope its usage counts under: the account's given, the only sender's, or none", async () => {
		await recordSends(store, 'acctA', [{ ...send('T1'), scope: 'account:a' }, { ...send('T2'), scope: 'account:a' }]);
		await recordSends(store, 'acctB', [{ ...send('T1'), scope: 'account:b' }]);
		expect((await markReported(store, [{ taskId: 'T1', status: 1 }], 'checkPending', 'acctA')).get('T1')).toMatchObject({ first: true, before: { scope: 'account:a' } });
		expect((await markReported(store, [{ taskId: 'T1', status: -1 }], 'sendAndCheck', 'acctA')).get('T1')).toMatchObject({ first: false, before: { reportedBy: 'checkPending', reportedStatus: 1 } });
		expect((await markReported(store, [{ taskId: 'T2', status: -1 }], 'trigger')).get('T2')).toMatchObject({ first: true, before: { scope: 'account:a' } });
		expect((await markReported(store, [{ taskId: 'T3', status: 1 }], 'trigger')).get('T3')).toEqual({ before: undefined, first: true });
		expect((await markReported(store, [{ taskId: 'T3', status: 1 }], 'trigger')).get('T3')).toMatchObject({ first: false, before: { reportedBy: 'trigger' } });
	});

	it('a send from before entries, asked about by Check Pending, is still the trigger\'s to mark', async () => {
		await recordSends(store, 'acct', [send('L1', 'old-1')]);
		await legacy('L1', { reference: 'old-1', workflowId: 'w1', executionId: 'e0', sentAt: now });
		now += 1000;
		await markChecked(store, 'acct', ['L1']);
		expect((await readSends(store, ['L1'], 'acct')).get('L1')).toMatchObject({ reference: 'old-1', checkedAt: now });
		expect((await markReported(store, [{ taskId: 'L1', status: 1 }], 'trigger')).get('L1')).toMatchObject({ first: true, before: { reference: 'old-1' } });
		expect(await pendingIds()).toEqual([]);
	});

	it("a send from before entries by another execution keeps apart from a new send of the same ID: neither is taken for the other's", async () => {
		await legacy('L2', { reference: 'old', workflowId: 'w1', executionId: 'e0', sentAt: now - 1000, checkedAt: now - 500 });
		await recordSends(store, 'acct', [send('L2', 'new')]);
		expect((await readSends(store, ['L2'], 'acct')).get('L2')).toEqual({ taskId: 'L2', reference: 'new', workflowId: 'w1', executionId: 'e1', sentAt: now, keepUntil: now + KEEP_SENDS_MS });
		now += 1000;
		await markChecked(store, 'acct', ['L2']);
		expect((await readSends(store, ['L2'], 'acct')).get('L2')).toMatchObject({ reference: 'new', checkedAt: now });
		// Two sends of the ID: a report without an account belongs to neither.
		expect((await markReported(store, [{ taskId: 'L2', status: 1 }], 'trigger')).get('L2')).toMatchObject({ ambiguous: true });
	});

	it('the same execution in another workflow is another send too', async () => {
		await legacy('L3', { reference: 'old', workflowId: 'w0', executionId: 'e1', sentAt: now - 1000 });
		await recordSends(store, 'acct', [send('L3', 'new')]);
		expect((await readSends(store, ['L3'], 'acct')).get('L3')).toMatchObject({ reference: 'new', sentAt: now });
	});

	it('Check Pending marks a pending send only: a reported one, or one the store does not know, is left as it is', async () => {
		await recordSends(store, 'acct', [send('T1')]);
		await markReported(store, [{ taskId: 'T1', status: 1 }], 'trigger');
		const { writes } = recordUpdates(store);
		await markChecked(store, 'acct', ['T1', 'UNKNOWN']);
		expect(writes).toEqual([[]]);
		expect((await readSends(store, ['T1'], 'acct')).get('T1')?.checkedAt).toBeUndefined();
	});
});

describe('listing pending sends', () => {
	it('lists the sends made from `since` to `until`, to the millisecond, though their minute holds others', async () => {
		for (const at of [0, 10_000, 20_000, 30_000, 40_000]) {
			now = T0 + at;
			await recordSends(store, 'acct', [send(`at ${at / 1000}s`)]);
		}
		expect(await pendingIds('acct', T0 + 10_000, T0 + 30_000)).toEqual(['at 10s', 'at 20s', 'at 30s']);
		expect(await pendingIds('acct', T0 + 10_001, T0 + 29_999)).toEqual(['at 20s']);
	});

	it('says how many more are pending than it hands back', async () => {
		await recordSends(store, 'acct', sendsOf(['T1', 'T2', 'T3']));
		expect((await pending('acct', now - HOUR, now, 2)).more).toBe(1);
		expect((await pending('acct', now - HOUR, now, 5)).more).toBe(0);
	});

	it('sends asked about at the same time go oldest first, whatever their order in the index', async () => {
		now = T0 + 5_000;
		await recordSends(store, 'acct', [send('NEW')]);
		// A retry across the upgrade: the send of before entries keeps its first time, listed after NEW.
		await legacy('OLD', { reference: null, workflowId: 'w1', executionId: 'e1', sentAt: T0 });
		await recordSends(store, 'acct', [send('OLD')]);
		expect((await readSends(store, ['OLD'], 'acct')).get('OLD')?.sentAt).toBe(T0);
		await markChecked(store, 'acct', ['NEW', 'OLD']);
		expect(await pendingIds('acct', T0 - HOUR)).toEqual(['OLD', 'NEW']);
	});

	it('writes nothing when nothing it read was settled', async () => {
		await recordSends(store, 'acct', sendsOf(['T1', 'T2']));
		const { updates } = recordUpdates(store);
		expect(await pendingIds()).toEqual(['T1', 'T2']);
		expect(updates()).toBe(0);
	});

	it('a part left with no task ID leaves the store', async () => {
		await recordSends(store, 'acct', sendsOf(['T1']));
		await markReported(store, [{ taskId: 'T1', status: 1 }], 'trigger');
		expect(await pendingIds()).toEqual([]);
		expect(await read(partKey('acct', T0, 0))).toBeUndefined();
		expect(await read(countKey('acct', T0))).toBe('1');
	});

	it('prunes at most 500 parts per store update', async () => {
		for (let minute = 0; minute < 501; minute++) {
			now = T0 + minute * MINUTE;
			await recordSends(store, 'acct', [send(`M${minute}`), send(`K${minute}`)]);
			await markReported(store, [{ taskId: `M${minute}`, status: 1 }], 'trigger');
		}
		const { writes } = recordUpdates(store);
		expect((await pending('acct', T0, now, 1)).more).toBe(500);
		expect(writes.map((batch) => batch.length)).toEqual([500, 1]);
		expect(await part('acct', T0, 0)).toEqual(['K0']);
		expect(await part('acct', now, 0)).toEqual(['K500']);
	});

	it("a part past the index's 72 hours (records kept longer for a long repeat window) leaves the store when pruned, never kept without an end", async () => {
		await recordSends(store, 'acct', [send('DONE'), send('LEFT')], 100 * HOUR);
		await markReported(store, [{ taskId: 'DONE', status: 1 }], 'trigger');
		// The index's own 72 hours end at this instant: a part written now would never expire.
		now = T0 + MINUTE + KEEP_SENDS_MS;
		expect(await pendingIds('acct', T0, now)).toEqual(['LEFT']);
		expect(await read(partKey('acct', T0, 0))).toBeUndefined();
	});
});

describe('the rest of the module', () => {
	it('tells its keys from other records', () => {
		expect(isDeliveryKey('delivery:task:T1')).toBe(true);
		expect(isDeliveryKey('send:delivery:')).toBe(false);
	});

	it('takes delivered (1) and failed (-1) for final, nothing else', () => {
		expect([1, -1, 0, 2, '1', undefined, null].map(isFinalStatus)).toEqual([true, true, false, false, false, false, false]);
	});

	it("opens the store the SMS Trigger sees: never the credential's Redis", async () => {
		const folder = mkdtempSync(join(tmpdir(), 'dgw-delivery-store-'));
		const file = process.env.DATA_GATEWAY_STORE_FILE;
		process.env.DATA_GATEWAY_STORE_FILE = join(folder, 'store.sqlite');
		try {
			const getCredentials = jest.fn(async () => ({ appCode: 'x', redisUrl: 'redis://127.0.0.1:1' }));
			const ctx = { getNode: () => ({ credentials: { dataGatewayApi: { id: 'c1', name: 'Gateway' } } }), getCredentials } as unknown as IExecuteFunctions;
			const opened = await openDeliveryStore(ctx);
			expect(opened.kind).toBe('sqlite');
			expect(getCredentials).not.toHaveBeenCalled();
		} finally {
			forgetOpenStores();
			if (file === undefined) delete process.env.DATA_GATEWAY_STORE_FILE;
			else process.env.DATA_GATEWAY_STORE_FILE = file;
			rmSync(folder, { recursive: true, force: true });
		}
	});
});
