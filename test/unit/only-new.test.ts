/**
 * Only what is new at its edges (lookups/onlyNew.ts): one text per content, the node's own scope,
 * what the node keeps, and a kept state it cannot read. test/unit/across-executions.test.ts has the
 * common cases; test/lookups/acrossExecutions.test.ts whole nodes.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { fingerprint, nodeScope, SEEN_DAYS, stableJson, takeNews } from '../../nodes/shared/lookups/onlyNew';
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
	});

	it.each([
		['not JSON', 'not json'],
		['lists that are not lists', JSON.stringify({ seen: 'a', last: 7 })],
	])('a kept state that is %s counts as nothing seen', async (_label, value) => {
		const store = new MemoryStore(() => 0);
		const key = `seen|${scope}|0|${fingerprint('q')}`;
		await store.update([key], () => ({ writes: [{ key, value }], result: undefined }));
		expect((await takeNews(store, scope, 'records', new Map([['q', ['a']]]))).get('q')).toEqual(['a']);
	});
});
