/**
 * Only what is new at its edges (lookups/onlyNew.ts): one text per content, the node's own scope,
 * what the node keeps, and a kept state it cannot read. test/unit/across-executions.test.ts has the
 * common cases; test/lookups/acrossExecutions.test.ts whole nodes.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { fingerprint, nodeScope, SEEN_DAYS, stableJson, takeNews, takeWhatIsNew } from '../../nodes/shared/lookups/onlyNew';
import type { StoreHints } from '../../nodes/shared/lookups/storeHints';
import { billText } from '../../nodes/shared/money/bill';
import type { DurableStore } from '../../nodes/shared/store/durableStore';
import { MemoryStore } from '../../nodes/shared/store/memoryStore';

describe('one text per content', () => {
	it.each([
		[{ b: [1, 'x'], a: { d: null, c: true } }, '{"a":{"c":true,"d":null},"b":[1,"x"]}'],
		[[], '[]'],
		[{}, '{}'],
		[null, 'null'],
		[undefined, 'null'],
		['text', '"text"'],
		[0, '0'],
	])('%p is written %s', (value, text) => {
		expect(stableJson(value)).toBe(text);
	});

	it('a fingerprint is 16 hex characters, one per content, holding none of it', () => {
		const print = fingerprint({ plate: '京A12345', records: [1, 2] });
		expect(print).toMatch(/^[0-9a-f]{16}$/);
		expect(fingerprint({ records: [1, 2], plate: '京A12345' })).toBe(print);
		expect(fingerprint({ plate: '京A12345', records: [2, 1] })).not.toBe(print);
	});
});

describe("the node's own scope", () => {
	const ctx = (workflowId: string | undefined, node: { id?: string; name: string }) => ({ getWorkflow: () => ({ id: workflowId }), getNode: () => node }) as unknown as IExecuteFunctions;

	it('is its workflow and node ID, or its name where it has no ID', () => {
		expect(nodeScope(ctx('wf1', { id: 'n1', name: 'Plates' }))).toBe('wf1|n1');
		expect(nodeScope(ctx(undefined, { name: 'Plates' }))).toBe('|Plates');
	});
});

describe('what a node keeps', () => {
	const scope = 'wf|node';

	it(`keeps per question what it output, for ${SEEN_DAYS} days after the last run that saw it`, async () => {
		let now = 0;
		const store = new MemoryStore(() => now);
		await takeNews(store, scope, 'records', new Map([['q', ['a']]]));
		now = SEEN_DAYS * 86_400_000 - 1;
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'b']]]))).get('q')).toEqual(['b']);
		now += SEEN_DAYS * 86_400_000 - 1;
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'b']]]))).get('q')).toEqual([]);
		now += SEEN_DAYS * 86_400_000;
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'b']]]))).get('q')).toEqual(['a', 'b']);
	});

	it('counts a record once however often one answer holds it; changed content compares in order', async () => {
		const store = new MemoryStore(() => 0);
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'a', 'b']]]))).get('q')).toEqual(['a', 'b']);
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['x', 'x']]]))).get('c')).toEqual(['x']);
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['x']]]))).get('c')).toEqual([]);
	});

	it('a retry outputs again only what the last run output, not everything seen', async () => {
		const store = new MemoryStore(() => 0);
		await takeNews(store, scope, 'records', new Map([['q', ['a']]]));
		await takeNews(store, scope, 'records', new Map([['q', ['a', 'b']]]));
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'b']]]), { retry: true })).get('q')).toEqual(['b']);
		// What was output again is kept once: retries do not grow the state.
		expect(JSON.parse((await store.read([`seen|${scope}|0|${fingerprint('q')}`]))[0] ?? '')).toEqual({ seen: ['a', 'b'], last: ['b'] });
		await takeNews(store, scope, 'changed', new Map([['c', ['x']]]));
		await takeNews(store, scope, 'changed', new Map([['c', ['y']]]));
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['x']]]), { retry: true })).get('c')).toEqual(['x']);
	});

	it('starts over in a new generation that later runs keep reading', async () => {
		let now = 10;
		const store = new MemoryStore(() => now);
		await takeNews(store, scope, 'records', new Map([['q', ['a']]]));
		now = 20;
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a']]]), { startOver: true })).get('q')).toEqual(['a']);
		expect((await store.read([`seen-generation|${scope}`]))[0]).toBe('20');
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'b']]]))).get('q')).toEqual(['b']);
		// Started over with other content: the old generation's records are new again.
		now = 30;
		expect((await takeNews(store, scope, 'records', new Map([['q', ['c']]]), { startOver: true })).get('q')).toEqual(['c']);
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'c']]]))).get('q')).toEqual(['a']);
	});

	it('changed content: all of it when any part changed, nothing while it stays; a retry outputs again only what the failed run output', async () => {
		const store = new MemoryStore(() => 0);
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['x', 'y']]]))).get('c')).toEqual(['x', 'y']);
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['x', 'z']]]))).get('c')).toEqual(['x', 'z']);
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['y']]]))).get('c')).toEqual(['y']);
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['y']]]))).get('c')).toEqual([]);
		// The last run output nothing: its retry outputs nothing either.
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['y']]]), { retry: true })).get('c')).toEqual([]);
	});

	it('a node that never started over reads what earlier versions kept for it (generation 0)', async () => {
		const store = new MemoryStore(() => 0);
		const key = `seen|${scope}|0|${fingerprint('q')}`;
		await store.update([key], () => ({ writes: [{ key, value: JSON.stringify({ seen: ['a'], last: ['a'] }) }], result: undefined }));
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a', 'b']]]))).get('q')).toEqual(['b']);
		expect(JSON.parse((await store.read([key]))[0] ?? '')).toEqual({ seen: ['a', 'b'], last: ['b'] });
	});

	it.each([
		['not JSON', 'not json'],
		['lists that are not lists', JSON.stringify({ seen: 'a', last: 7 })],
	])('a kept state that is %s counts as nothing seen', async (_label, value) => {
		const store = new MemoryStore(() => 0);
		const key = `seen|${scope}|0|${fingerprint('q')}`;
		await store.update([key], () => ({ writes: [{ key, value }], result: undefined }));
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a']]]))).get('q')).toEqual(['a']);
		const changedKey = `seen|${scope}|0|${fingerprint('c')}`;
		await store.update([changedKey], () => ({ writes: [{ key: changedKey, value }], result: undefined }));
		expect((await takeNews(store, scope, 'changed', new Map([['c', ['x']]]))).get('c')).toEqual(['x']);
	});
});

describe('what is new in a run (takeWhatIsNew)', () => {
	const RULE = { kind: 'records' as const, option: { displayName: 'Only New Violations', name: 'onlyNew', description: '' }, bill: { checked: ['plate', 'plates'] as [string, string], withNews: 'with new violations' } };
	const NODE = { id: 'n1', name: 'Plates', type: 'dataGatewayVehicle', typeVersion: 1, position: [0, 0] as [number, number], parameters: {} };
	const ctxOf = (mode = 'trigger') => ({ getWorkflow: () => ({ id: 'wf1' }), getNode: () => NODE, getMode: () => mode }) as unknown as IExecuteFunctions;
	const hintsOf = (store: DurableStore) => ({ open: async () => store }) as unknown as StoreHints;
	const plain = (news: Map<string, Set<string>>) => Object.fromEntries([...news].map(([question, prints]) => [question, [...prints]]));
	/** The line the run's bill shows for Only New. */
	const billOf = (ctx: IExecuteFunctions) => billText(ctx, 'violationQuery', []).split('; ').find((part) => part.includes('checked'));

	it("records per question what either item with that question holds, and the bill counts the items checked and those with news", async () => {
		const store = new MemoryStore(() => 0);
		const ctx = ctxOf();
		const first = await takeWhatIsNew(ctx, hintsOf(store), RULE, [
			{ question: 'q1', prints: ['a'], startOver: false },
			{ question: 'q1', prints: ['b'], startOver: false },
			{ question: 'q2', prints: [], startOver: false },
		]);
		expect(plain(first)).toEqual({ q1: ['a', 'b'], q2: [] });
		expect(billOf(ctx)).toBe('3 plates checked, 2 with new violations');

		const next = ctxOf();
		const second = await takeWhatIsNew(next, hintsOf(store), RULE, [{ question: 'q1', prints: ['b', 'c'], startOver: false }]);
		expect(plain(second)).toEqual({ q1: ['c'] });
		expect(billOf(next)).toBe('1 plate checked, 1 with new violations');
		const none = ctxOf();
		expect(plain(await takeWhatIsNew(none, hintsOf(store), RULE, [{ question: 'q1', prints: ['a', 'c'], startOver: false }]))).toEqual({ q1: [] });
		expect(billOf(none)).toBe('1 plate checked, 0 with new violations');
	});

	it("starts over when any item asks, and n8n's Retry execution outputs again what the failed run took", async () => {
		const store = new MemoryStore(() => 5);
		await takeWhatIsNew(ctxOf(), hintsOf(store), RULE, [{ question: 'q1', prints: ['a'], startOver: false }]);
		const again = await takeWhatIsNew(ctxOf(), hintsOf(store), RULE, [
			{ question: 'q2', prints: [], startOver: false },
			{ question: 'q1', prints: ['a'], startOver: true },
		]);
		expect(plain(again)).toEqual({ q2: [], q1: ['a'] });
		await takeWhatIsNew(ctxOf(), hintsOf(store), RULE, [{ question: 'q1', prints: ['a', 'b'], startOver: false }]);
		expect(plain(await takeWhatIsNew(ctxOf('retry'), hintsOf(store), RULE, [{ question: 'q1', prints: ['a', 'b'], startOver: false }]))).toEqual({ q1: ['b'] });
		expect(plain(await takeWhatIsNew(ctxOf('manual'), hintsOf(store), RULE, [{ question: 'q1', prints: ['a', 'b'], startOver: false }]))).toEqual({ q1: [] });
	});

	it('keeps the number a question asks about with its state, so that erasing the number forgets it', async () => {
		const store = new MemoryStore(() => 0);
		const phone = '13900000001';
		await takeWhatIsNew(ctxOf(), hintsOf(store), RULE, [
			{ question: 'tel', prints: ['x'], startOver: false, phone },
			{ question: 'other', prints: ['y'], startOver: false },
		]);
		expect(await store.erasePhone(phone)).toBe(1);
		const after = await takeWhatIsNew(ctxOf(), hintsOf(store), RULE, [
			{ question: 'tel', prints: ['x'], startOver: false, phone },
			{ question: 'other', prints: ['y'], startOver: false },
		]);
		expect(plain(after)).toEqual({ tel: ['x'], other: [] });
	});

	it('a store that fails stops the node, naming the option and the store, and nothing is output', async () => {
		const broken = Object.assign(new MemoryStore(() => 0), {
			label: 'Redis at 10.0.0.9:6379',
			update: async () => {
				throw new Error('connection lost');
			},
		});
		const failed = takeWhatIsNew(ctxOf(), hintsOf(broken), RULE, [{ question: 'q1', prints: ['a'], startOver: false }]);
		await expect(failed).rejects.toThrow('Only New Violations could not read what this node output before, in Redis at 10.0.0.9:6379: connection lost');
		await expect(failed).rejects.toMatchObject({ description: 'Nothing was output, so nothing is reported twice. The answers are kept for this execution: Retry On Fail does not pay for them again.' });
		const unopened = { open: async () => await Promise.reject(new Error('no store')) } as unknown as StoreHints;
		await expect(takeWhatIsNew(ctxOf(), unopened, RULE, [{ question: 'q1', prints: ['a'], startOver: false }])).rejects.toThrow(
			'Only New Violations could not read what this node output before, in the store: no store',
		);
		await expect(takeWhatIsNew(ctxOf(), { open: async () => await Promise.reject('refused') } as unknown as StoreHints, RULE, [])).rejects.toThrow('in the store: refused');
	});
});
