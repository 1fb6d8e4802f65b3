import { MemoryStore } from '../../nodes/shared/store/memoryStore';
import { mayAllVanish } from '../../nodes/shared/store/redis/evictionRules';
import {
	CATALOGUE_ACCOUNTS_KEY,
	catalogueKey,
	MAX_CATALOGUE_ENTRIES,
	readCatalogue,
	recordReview,
	recordSightings,
} from '../../nodes/shared/store/reviewedCatalogue';
import { entryLabel } from '../../nodes/DataGatewaySms/actions/catalogue/pickByName';
import { parseIdList } from '../../nodes/DataGatewaySms/actions/catalogue/import';

/** The catalogue's rules on a store with a clock the test moves. */
let now = Date.UTC(2026, 10, 26, 12);
const store = () => new MemoryStore(() => now);

describe('the catalogue of signatures and templates', () => {
	it('keeps what it saw per account and kind; a later sighting keeps the fields it does not mention', async () => {
		const kept = store();
		await recordSightings(kept, 'a', 'template', [{ id: '7', name: 'Login', status: 0, error: null, content: 'code ${code}', seenBy: 'create' }]);
		now += 1000;
		await recordSightings(kept, 'a', 'template', [{ id: '7', status: 1, seenBy: 'callback' }]);
		expect(await readCatalogue(kept, 'a', 'template')).toEqual([
			{ id: '7', name: 'Login', status: 1, error: null, content: 'code ${code}', seenBy: 'callback', lastSeen: new Date(now).toISOString() },
		]);
		expect(await readCatalogue(kept, 'b', 'template')).toEqual([]);
		expect(await readCatalogue(kept, 'a', 'signature')).toEqual([]);
	});

	it(`holds at most ${MAX_CATALOGUE_ENTRIES} entries per account and kind, dropping the longest unseen`, async () => {
		const kept = store();
		for (let id = 1; id <= MAX_CATALOGUE_ENTRIES + 2; id++) {
			now += 1;
			await recordSightings(kept, 'a', 'signature', [{ id: String(id), seenBy: 'import' }]);
		}
		const ids = (await readCatalogue(kept, 'a', 'signature')).map((entry) => Number(entry.id));
		expect(ids).toHaveLength(MAX_CATALOGUE_ENTRIES);
		expect(Math.min(...ids)).toBe(3);
	});

	it('a review callback updates every account holding that ID of that kind, and adds it to none', async () => {
		const kept = store();
		await recordSightings(kept, 'a', 'template', [{ id: '7', status: 0, seenBy: 'create' }]);
		await recordSightings(kept, 'b', 'signature', [{ id: '7', status: 0, seenBy: 'create' }]);
		expect(await recordReview(kept, 'template', { id: '7', status: 2, error: 'too broad', seenBy: 'callback' })).toBe(1);
		expect(await readCatalogue(kept, 'a', 'template')).toEqual([expect.objectContaining({ id: '7', status: 2, error: 'too broad' })]);
		expect(await readCatalogue(kept, 'b', 'signature')).toEqual([expect.objectContaining({ id: '7', status: 0 })]);
		expect(await recordReview(kept, 'template', { id: '8', status: 1, seenBy: 'callback' })).toBe(0);
		expect(await readCatalogue(kept, 'a', 'template')).toHaveLength(1);
	});

	it('a garbled value reads as an empty catalogue and is replaced', async () => {
		const kept = store();
		await kept.update([catalogueKey('a', 'template')], () => ({ writes: [{ key: catalogueKey('a', 'template'), value: '{not json' }], result: null }));
		expect(await readCatalogue(kept, 'a', 'template')).toEqual([]);
		await recordSightings(kept, 'a', 'template', [{ id: '1', seenBy: 'get' }]);
		expect(await readCatalogue(kept, 'a', 'template')).toHaveLength(1);
	});

	it('may vanish on an evicting Redis: it is a convenience', () => {
		expect(mayAllVanish([catalogueKey('a', 'template'), CATALOGUE_ACCOUNTS_KEY])).toBe(true);
	});
});

describe('the pickers and the import', () => {
	it('a list entry names name, ID, a status other than approved with the reason, and the start of the text', () => {
		const base = { id: '7', name: 'Login', error: null, lastSeen: '', seenBy: 'get' as const };
		expect(entryLabel({ ...base, status: 1, content: 'Your code is ${code}' })).toBe('Login · #7 · Your code is ${code}');
		expect(entryLabel({ ...base, status: 2, error: 'too broad' })).toBe('Login · #7 · rejected: too broad');
		expect(entryLabel({ ...base, name: null, status: null, content: 'x'.repeat(50) })).toBe(`(no name) · #7 · status unknown · ${'x'.repeat(40)}…`);
	});

	it('reads IDs and ranges once each, in order, and names what it cannot read', () => {
		expect(parseIdList('3-5, 4，9 1')).toEqual({ ids: ['3', '4', '5', '9', '1'] });
		expect(parseIdList(' ')).toEqual({ problem: 'is empty' });
		expect(parseIdList('a')).toEqual({ problem: 'has "a", which is neither an ID nor a range like 1-50' });
		expect(parseIdList('0-3')).toEqual({ problem: 'has "0-3": IDs start at 1 and a range goes upwards' });
	});
});
