/**
 * The store's key names (store/keyName.ts) on staged secrets, computed here from their definition
 * (HMAC-SHA-256 with the installation's derived secret, base64url): what Redis's and the SQLite
 * file's readers see, what earlier versions wrote, and the checks every update's writes pass.
 */
import { createHash, createHmac } from 'node:crypto';

import { forgetNameSecret, nameSecret, STORE_KEY_VARIABLE } from '../../nodes/shared/store/nameSecret';
import {
	checkWrittenKeys,
	groupedKey,
	KEY_CHECK_NAME,
	keyCheck,
	keyMismatch,
	legacyKeyName,
	legacyRowKey,
	lifetimeMs,
	NAME_PREFIX,
	phoneTag,
	storedKeyName,
	storedRowKey,
	valueTag,
} from '../../nodes/shared/store/keyName';

const saved = process.env[STORE_KEY_VARIABLE];
function useStoreKey(value: string) {
	process.env[STORE_KEY_VARIABLE] = value;
	forgetNameSecret();
}
afterAll(() => {
	if (saved === undefined) delete process.env[STORE_KEY_VARIABLE];
	else process.env[STORE_KEY_VARIABLE] = saved;
	forgetNameSecret();
});
beforeEach(() => useStoreKey('store-key-one'));

const keyed = (text: string) => createHmac('sha256', nameSecret().key).update(text).digest('base64url');
const plain = (text: string) => createHash('sha256').update(text).digest('base64url');

describe('key names', () => {
	it('are the prefix and a keyed hash of the whole key; another secret gives another name', () => {
		const key = 'send|13900001234|2026-11-27';
		expect(NAME_PREFIX).toBe('dgw:~');
		expect(storedKeyName(key)).toBe(`dgw:~${keyed(key)}`);
		expect(storedKeyName(key)).not.toContain('13900001234');
		const first = storedKeyName(key);
		useStoreKey('store-key-two');
		expect(storedKeyName(key)).toBe(`dgw:~${keyed(key)}`);
		expect(storedKeyName(key)).not.toBe(first);
	});

	it('of earlier versions: a plain SHA-256, grouped at the first ">" for the SQLite rows', () => {
		expect(legacyKeyName('opt-out|13900001234')).toBe(`dgw:${plain('opt-out|13900001234')}`);
		expect(legacyRowKey('opt-out|13900001234')).toBe(`dgw:${plain('opt-out|13900001234')}`);
		expect(legacyRowKey('batch-7>item|3')).toBe(`dgw:${plain('batch-7').slice(0, 10)}.${plain('batch-7>item|3')}`);
		expect(legacyRowKey('>starts-grouped')).toBe(`dgw:${plain('').slice(0, 10)}.${plain('>starts-grouped')}`);
	});

	it('of a group: the group hash (10 characters), a dot, then the keyed hash of the whole key; a key without ">" keeps its name', () => {
		const key = groupedKey('batch-7', 'item|3');
		expect(key).toBe('batch-7>item|3');
		expect(storedRowKey(key)).toBe(`dgw:~${keyed('batch-7').slice(0, 10)}.${keyed('batch-7>item|3')}`);
		// The same group again comes from the recent names, and a changed secret is not served from them.
		expect(storedRowKey(groupedKey('batch-7', 'item|4'))).toBe(`dgw:~${keyed('batch-7').slice(0, 10)}.${keyed('batch-7>item|4')}`);
		useStoreKey('store-key-two');
		expect(storedRowKey(key)).toBe(`dgw:~${keyed('batch-7').slice(0, 10)}.${keyed('batch-7>item|3')}`);
		expect(storedRowKey('task>id>with>marks')).toBe(`dgw:~${keyed('task').slice(0, 10)}.${keyed('task>id>with>marks')}`);
		expect(storedRowKey('no-group')).toBe(storedKeyName('no-group'));
		// A '>' first: grouped at it, under the empty group's hash.
		expect(storedRowKey('>starts-grouped')).toBe(`dgw:~${keyed('').slice(0, 10)}.${keyed('>starts-grouped')}`);
	});

	it("tag a value's key and a phone number with keyed hashes of their own kind, never the text", () => {
		expect(valueTag('count|13900001234|day')).toBe(keyed('value|count|13900001234|day').slice(0, 22));
		expect(valueTag('count|13900001234|day')).toHaveLength(22);
		expect(phoneTag('13900001234')).toBe(keyed('phone|13900001234'));
		// More numbers than the recent names hold: each still gets its own tag, the first again the same.
		const tags = Array.from({ length: 1030 }, (_, index) => phoneTag(`1390000${String(index).padStart(4, '0')}`));
		expect(new Set(tags).size).toBe(1030);
		expect(phoneTag('13900000000')).toBe(keyed('phone|13900000000'));
		useStoreKey('store-key-two');
		expect(phoneTag('13900001234')).toBe(keyed('phone|13900001234'));
	});

	it('keep a check of the secret under a fixed name, and name the settings and the fix when it differs', () => {
		expect(KEY_CHECK_NAME).toBe('dgw:~key-check');
		expect(keyCheck()).toBe(keyed('key-check'));
		const message = keyMismatch('The SQLite file at /data/store.db');
		expect(message).toBe(
			`The SQLite file at /data/store.db is used by n8n processes with another encryption key than this one's (from ${STORE_KEY_VARIABLE}): the records they keep are invisible here, so nothing is sent. ` +
				'Give every n8n process that shares this store the same N8N_ENCRYPTION_KEY (or, for n8n installations of their own, the same DATA_GATEWAY_STORE_KEY); if the key was changed on purpose, delete the store\'s dgw:~key-check entry (what was kept under the old key is then ignored and expires)',
		);
	});
});

describe("a write's lifetime and keys", () => {
	it('is whole ms, at least 1; none for undefined or 0; a negative or endless one is refused', () => {
		expect([lifetimeMs(undefined), lifetimeMs(0), lifetimeMs(0.2), lifetimeMs(1), lifetimeMs(1500.1), lifetimeMs(86_400_000)]).toEqual([undefined, undefined, 1, 1, 1501, 86_400_000]);
		expect(() => lifetimeMs(-1)).toThrow("A store write's ttlMs must be a positive number of ms, not -1");
		expect(() => lifetimeMs(Number.POSITIVE_INFINITY)).toThrow('not Infinity');
		expect(() => lifetimeMs(Number.NaN)).toThrow('not NaN');
	});

	it('may touch only the keys the update read', () => {
		expect(() => checkWrittenKeys(['a', 'b'], [{ key: 'b' }, { key: 'a' }])).not.toThrow();
		expect(() => checkWrittenKeys(['a'], [])).not.toThrow();
		expect(() => checkWrittenKeys(['a', 'b'], [{ key: 'a' }, { key: 'c' }])).toThrow('A store update wrote c, which it did not read');
	});
});
