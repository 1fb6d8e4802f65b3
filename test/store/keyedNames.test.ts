/**
 * Key names keyed with a secret from n8n's encryption key (keyName.ts, nameSecret.ts), found as
 * n8n finds it; earlier versions' names still read in Redis; and erasing one phone number in each
 * store (erasePhone.ts), down to the SQLite file's bytes.
 */
import { createHash, createHmac } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { erasePhone, erasePhoneEverywhere, normalizedPhone } from '../../nodes/shared/store/erasePhone';
import { nodeSqlite } from '../../nodes/shared/store/hostEnvironment';
import { legacyKeyName, phoneTag, storedKeyName, storedRowKey } from '../../nodes/shared/store/keyName';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { FALLBACK_KEY_FILE, forgetNameSecret, nameSecret } from '../../nodes/shared/store/nameSecret';
import { redisFor } from '../../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../../nodes/shared/store/redisStore';
import { SqliteDurableStore } from '../../nodes/shared/store/sqliteStore';
import type { RunningRedis } from '../../scripts/n8n-runtime/queue';
import { useRedis } from '../harness/redis';
import { withEnvironment } from './selection';

const VARIABLES = ['DATA_GATEWAY_STORE_KEY', 'DATA_GATEWAY_STORE_KEY_FILE', 'N8N_ENCRYPTION_KEY', 'N8N_ENCRYPTION_KEY_FILE', 'N8N_USER_FOLDER'] as const;
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
let folder: string;

function setEnvironment(values: Partial<Record<(typeof VARIABLES)[number], string>>) {
	for (const name of VARIABLES) delete process.env[name];
	Object.assign(process.env, values);
	forgetNameSecret();
}

beforeAll(() => {
	folder = mkdtempSync(join(tmpdir(), 'dgw-keyed-names-'));
});
afterEach(() => {
	for (const name of VARIABLES) {
		if (saved[name] === undefined) delete process.env[name];
		else process.env[name] = saved[name];
	}
	forgetNameSecret();
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const key = 'sms-number|wf|node|13712345678>sms-count|minute|1';
/** The name a reader who knows the scheme computes for a number with a guessed key. */
const nameWith = (secret: string) => `dgw:~${createHmac('sha256', createHmac('sha256', secret).update('n8n-nodes-data-gateway store key names v1').digest()).update(key).digest('base64url')}`;

describe('key names', () => {
	it("are keyed with n8n's N8N_ENCRYPTION_KEY: not the plain SHA-256 that trying every number finds, and another key gives other names", () => {
		setEnvironment({ N8N_ENCRYPTION_KEY: 'key-one', N8N_USER_FOLDER: folder });
		const name = storedKeyName(key);
		expect(name).toBe(nameWith('key-one'));
		expect(name).not.toContain(createHash('sha256').update(key).digest('base64url'));
		expect(legacyKeyName(key)).toBe(`dgw:${createHash('sha256').update(key).digest('base64url')}`);
		// Nor are the phone tag (what an erase finds rows by) and a grouped row's prefix (issue 41 item 9): each keyed, each another with another key.
		const plain = (text: string) => createHash('sha256').update(text).digest('base64url');
		const tag = phoneTag('13712345678');
		const row = storedRowKey(key);
		expect([tag, row].join()).not.toContain(plain('phone|13712345678').slice(0, 10));
		expect(row.slice('dgw:~'.length, 'dgw:~'.length + 10)).not.toBe(plain(key.slice(0, key.indexOf('>'))).slice(0, 10));
		setEnvironment({ N8N_ENCRYPTION_KEY: 'key-three', N8N_USER_FOLDER: folder });
		expect(phoneTag('13712345678')).not.toBe(tag);
		expect(storedRowKey(key).slice(0, 15)).not.toBe(row.slice(0, 15));
		setEnvironment({ N8N_ENCRYPTION_KEY: 'key-two', N8N_USER_FOLDER: folder });
		expect(storedKeyName(key)).not.toBe(name);
	});

	it("reads the key as n8n does: N8N_ENCRYPTION_KEY_FILE (trimmed, quotes dropped), else `encryptionKey` in <N8N_USER_FOLDER>/.n8n/config", () => {
		const file = join(folder, 'secret');
		writeFileSync(file, ' "from-file" \n');
		setEnvironment({ N8N_ENCRYPTION_KEY_FILE: file, N8N_USER_FOLDER: folder });
		expect(storedKeyName(key)).toBe(nameWith('from-file'));
		const user = join(folder, 'user');
		mkdirSync(join(user, '.n8n'), { recursive: true });
		writeFileSync(join(user, '.n8n', 'config'), JSON.stringify({ encryptionKey: 'from-config' }));
		setEnvironment({ N8N_USER_FOLDER: user });
		expect(storedKeyName(key)).toBe(nameWith('from-config'));
		expect(nameSecret().source).toMatch(/settings file .*\.n8n\/config$/);
		// An empty variable counts as not set, as in n8n.
		setEnvironment({ N8N_ENCRYPTION_KEY: '', N8N_USER_FOLDER: user });
		expect(storedKeyName(key)).toBe(nameWith('from-config'));
	});

	it('DATA_GATEWAY_STORE_KEY, when set, keys the names instead (n8n installations of their own that share one Redis)', () => {
		setEnvironment({ DATA_GATEWAY_STORE_KEY: 'shared by two installations', N8N_ENCRYPTION_KEY: 'key-one', N8N_USER_FOLDER: folder });
		expect(storedKeyName(key)).toBe(nameWith('shared by two installations'));
		expect(nameSecret().source).toBe('DATA_GATEWAY_STORE_KEY');
	});

	it('without any n8n key, makes one key file (mode 600) that every later process of the host reads', () => {
		const user = join(folder, 'bare');
		setEnvironment({ N8N_USER_FOLDER: user });
		const name = storedKeyName(key);
		const file = join(user, '.n8n', FALLBACK_KEY_FILE);
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(name).toBe(nameWith(readFileSync(file, 'utf8')));
		setEnvironment({ N8N_USER_FOLDER: user });
		expect(storedKeyName(key)).toBe(name);
	});
});

describe('a store first used with another key', () => {
	it('the SQLite file refuses this process, naming the setting and the fix, and writes nothing', async () => {
		const file = join(folder, 'other-key.sqlite');
		const sqlite = nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>;
		setEnvironment({ N8N_ENCRYPTION_KEY: 'installation one', N8N_USER_FOLDER: folder });
		const first = new SqliteDurableStore(sqlite, file);
		await first.update(['sent'], () => ({ writes: [{ key: 'sent', value: 'sent by one' }], result: undefined }));
		first.close();
		setEnvironment({ N8N_ENCRYPTION_KEY: 'installation two', N8N_USER_FOLDER: folder });
		const second = new SqliteDurableStore(sqlite, file);
		try {
			await expect(second.read(['sent'])).rejects.toThrow(/is used by n8n processes with another encryption key than this one's \(from N8N_ENCRYPTION_KEY\): .*nothing is sent\. Give every n8n process that shares this store the same N8N_ENCRYPTION_KEY \(or, for n8n installations of their own, the same DATA_GATEWAY_STORE_KEY\)/);
			await expect(second.update(['sent'], () => ({ writes: [{ key: 'sent', value: 'again' }], result: undefined }))).rejects.toThrow(/another encryption key/);
		} finally {
			second.close();
		}
		setEnvironment({ N8N_ENCRYPTION_KEY: 'installation one', N8N_USER_FOLDER: folder });
		const again = new SqliteDurableStore(sqlite, file);
		expect(await again.read(['sent'])).toEqual(['sent by one']);
		again.close();
	});
});

describe('erasing one phone number', () => {
	const phone = '13712345678';
	const other = '13787654321';
	/** Entries about the number and about another, as the callers write them (StoreWrite.phone). */
	async function fill(store: { update: SqliteDurableStore['update'] }) {
		const writes = [
			{ key: `message|${phone}`, value: `text for ${phone}`, ttlMs: 600_000, phone },
			{ key: `count|${phone}`, value: '1', ttlMs: 60_000, phone },
			{ key: `message|${other}`, value: `text for ${other}`, ttlMs: 600_000, phone: other },
			{ key: 'unrelated', value: 'kept', ttlMs: 600_000 },
		];
		await store.update(
			writes.map((write) => write.key),
			() => ({ writes, result: undefined }),
		);
		return writes.map((write) => write.key);
	}

	it('takes the number as the SMS and Telephone nodes do (a landline too), and names a wrong one', () => {
		expect(normalizedPhone('+86 137-1234-5678')).toBe(phone);
		expect(normalizedPhone('+86 10 1234 5678')).toBe('01012345678');
		expect(() => normalizedPhone('12345')).toThrow('"12345" is neither a mobile number (e.g. 13800138000) nor a landline with area code (e.g. 010-12345678): give the number as the SMS or Telephone node was given it');
	});

	it('a rewrite that does not know the number keeps the entry found by it (a delivery report marked later)', async () => {
		const file = join(folder, 'rewrite.sqlite');
		const sqlite = new SqliteDurableStore(nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>, file);
		try {
			for (const store of [sqlite, new MemoryStore()]) {
				const keys = await fill(store);
				await store.update([keys[0]], () => ({ writes: [{ key: keys[0], value: 'marked', ttlMs: 600_000 }], result: undefined }));
				await expect(erasePhone(store, phone)).resolves.toBe(2);
				expect(await store.read(keys)).toEqual([undefined, undefined, `text for ${other}`, 'kept']);
			}
		} finally {
			sqlite.close();
		}
	});

	it('in the SQLite file: its rows go, and their bytes leave the file and its WAL', async () => {
		const file = join(folder, 'erase.sqlite');
		const store = new SqliteDurableStore(nodeSqlite() as NonNullable<ReturnType<typeof nodeSqlite>>, file);
		try {
			const keys = await fill(store);
			expect(await erasePhone(store, `+86${phone}`)).toBe(2);
			expect(await store.read(keys)).toEqual([undefined, undefined, `text for ${other}`, 'kept']);
			const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((path) => readFileSync(path)));
			expect(bytes.includes(Buffer.from(`text for ${phone}`))).toBe(false);
			expect(bytes.includes(Buffer.from(`text for ${other}`))).toBe(true);
		} finally {
			store.close();
		}
	});

	it("in the process's memory", async () => {
		const store = new MemoryStore();
		const keys = await fill(store);
		// Its names are the stores' names: no key text in a dump of the process.
		expect((JSON.parse(store.dump()) as Array<[string]>).map(([name]) => name).join()).not.toContain(phone);
		await expect(erasePhone(store, phone)).resolves.toBe(2);
		expect(await store.read(keys)).toEqual([undefined, undefined, `text for ${other}`, 'kept']);
	});

	describe('in Redis', () => {
		let redis: RunningRedis;
		useRedis((started) => (redis = started));
		const cli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' }).trim();

		it('its keys and the tag set go; no key holds the number', async () => {
			const store = new RedisDurableStore(redisFor({ url: redis.url }, 'erase'), 'the test Redis', () => 'fix');
			const keys = await fill(store);
			expect(cli('--scan')).not.toContain(phone);
			expect(await erasePhone(store, phone)).toBe(2);
			expect(await store.read(keys)).toEqual([undefined, undefined, `text for ${other}`, 'kept']);
			// The other number's entry and its tag set, the unrelated one, and the key check.
			expect(cli('--scan').split('\n')).toHaveLength(4);
		});

		it('a Redis first used with another key refuses reads and writes, naming the fix', async () => {
			cli('FLUSHALL');
			setEnvironment({ N8N_ENCRYPTION_KEY: 'installation one', N8N_USER_FOLDER: folder });
			const connection = redisFor({ url: redis.url }, 'mismatch');
			await new RedisDurableStore(connection, 'the test Redis', () => 'fix').update(['x'], () => ({ writes: [{ key: 'x', value: 'one' }], result: undefined }));
			setEnvironment({ N8N_ENCRYPTION_KEY: 'installation two', N8N_USER_FOLDER: folder });
			const other = new RedisDurableStore(connection, 'the test Redis', () => 'fix');
			await expect(other.read(['x'])).rejects.toThrow(/^the test Redis is used by n8n processes with another encryption key/);
			await expect(other.update(['y'], () => ({ writes: [{ key: 'y', value: 'two' }], result: undefined }))).rejects.toThrow(/another encryption key/);
			// The erase too (npm run erase-phone): its tags are another key's, so it would find nothing and say "erased: 0" (issue 41 item 4).
			await expect(erasePhone(other, '13712345678')).rejects.toThrow(/^the test Redis is used by n8n processes with another encryption key/);
			expect(cli('--scan').split('\n')).toHaveLength(2);
			cli('FLUSHALL');
			setEnvironment({});
		});

		it("npm run erase-phone erases in n8n's queue Redis in queue mode, with no Redis given (issue 41 item 9)", async () => {
			cli('FLUSHALL');
			setEnvironment({ N8N_ENCRYPTION_KEY: 'installation one', N8N_USER_FOLDER: folder });
			const store = new RedisDurableStore(redisFor({ url: redis.url }, 'queue-erase'), 'the test Redis', () => 'fix');
			const keys = await fill(store);
			const restore = withEnvironment({ EXECUTIONS_MODE: 'queue', QUEUE_BULL_REDIS_HOST: '127.0.0.1', QUEUE_BULL_REDIS_PORT: String(redis.port), DATA_GATEWAY_STORE_FILE: join(folder, 'no-such-store.sqlite') });
			try {
				expect(await erasePhoneEverywhere(phone)).toEqual([{ store: `n8n's queue Redis at 127.0.0.1:${redis.port}`, erased: 2 }]);
			} finally {
				restore();
			}
			expect(await store.read(keys)).toEqual([undefined, undefined, `text for ${other}`, 'kept']);
			cli('FLUSHALL');
			setEnvironment({});
		});

		it('reads a value under the name of earlier versions, and a write moves it to the keyed name', async () => {
			const store = new RedisDurableStore(redisFor({ url: redis.url }, 'legacy'), 'the test Redis', () => 'fix');
			cli('SET', legacyKeyName('old send'), 'reserved before the upgrade', 'PX', '600000');
			expect(await store.read(['old send'])).toEqual(['reserved before the upgrade']);
			await store.update(['old send'], ([value]) => ({ writes: [{ key: 'old send', value: `${value}, claimed`, ttlMs: 600_000 }], result: undefined }));
			expect(cli('EXISTS', legacyKeyName('old send'))).toBe('0');
			expect(cli('GET', storedKeyName('old send'))).toBe('reserved before the upgrade, claimed');
		});
	});
});
