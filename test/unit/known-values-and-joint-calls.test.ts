/**
 * Two helpers of the send records (store/sendRecords/): KnownValues, the guess of a run's next
 * update from what its last update left, and JointCalls, which puts the claims that come while one
 * is with the store into one group. The send records over them: test/unit/sms-records.test.ts.
 */
import { JointCalls, type JointAnswer } from '../../nodes/shared/store/sendRecords/jointCalls';
import { KnownValues } from '../../nodes/shared/store/sendRecords/knownValues';
import type { StagedValues } from '../../nodes/shared/store/sendRecords/recordValues';
import { markMaybeApplied, mayHaveApplied, reasonOf, recordsFailure } from '../../nodes/shared/store/sendRecords/recordsFailure';

const staged = (values: Record<string, string | undefined>, now: number) => ({ current: (key: string) => values[key], now }) as unknown as StagedValues;

describe('KnownValues', () => {
	it('guesses only when every key is known, with the store time moved on by the time since', () => {
		const known = new KnownValues();
		expect(known.guess([])).toBeUndefined();
		const clock = jest.spyOn(performance, 'now').mockReturnValue(1_000);
		known.remember(['a', 'b'], staged({ a: 'one', b: undefined }, 50_000));
		clock.mockReturnValue(1_250);
		expect(known.guess(['a', 'b'])).toEqual({ values: ['one', undefined], now: 50_250 });
		expect(known.guess(['b'])).toEqual({ values: [undefined], now: 50_250 });
		expect(known.guess(['a', 'c'])).toBeUndefined();
		known.assume(['c'], ['three']);
		expect(known.guess(['c', 'a'])).toEqual({ values: ['three', 'one'], now: 50_250 });
		known.forget(['a', 'c']);
		expect(known.guess(['a'])).toBeUndefined();
		expect(known.guess(['b'])).toEqual({ values: [undefined], now: 50_250 });
		clock.mockRestore();
	});

	it('assumed values give no guess before an update has given the store time', () => {
		const known = new KnownValues();
		known.assume(['a'], ['one']);
		expect(known.guess(['a'])).toBeUndefined();
	});
});

describe('JointCalls', () => {
	/** Work that records its groups and waits to be released, answering each request doubled. */
	function gatedWork() {
		const groups: number[][] = [];
		const releases: Array<() => void> = [];
		const work = async (requests: number[]): Promise<Array<JointAnswer<number>>> => {
			groups.push(requests);
			await new Promise<void>((resolve) => releases.push(resolve));
			return requests.map((request) => ({ value: request * 2 }));
		};
		const release = async () => {
			releases.shift()?.();
			for (let tick = 0; tick < 10; tick++) await Promise.resolve();
		};
		return { groups, work, release };
	}

	it('starts with the requests asked together, groups those that come meanwhile, at most `most` at a time', async () => {
		const { groups, work, release } = gatedWork();
		const joint = new JointCalls(3, work);
		const first = [1, 2].map(async (request) => await joint.ask(request));
		await Promise.resolve();
		await Promise.resolve();
		const later = [3, 4, 5, 6, 7].map(async (request) => await joint.ask(request));
		await release();
		await release();
		await release();
		expect(await Promise.all([...first, ...later])).toEqual([2, 4, 6, 8, 10, 12, 14]);
		expect(groups).toEqual([[1, 2], [3, 4, 5], [6, 7]]);
		// Idle again: the next request starts a group of its own.
		const next = joint.ask(8);
		await Promise.resolve();
		await Promise.resolve();
		await release();
		expect(await next).toBe(16);
		expect(groups.at(-1)).toEqual([8]);
	});

	it("answers each request its own error, and every request of a group the group's failure", async () => {
		const joint = new JointCalls<number, number>(5, async (requests) => requests.map((request) => (request % 2 === 0 ? { value: request } : { error: new Error(`odd ${request}`) })));
		const answers = await Promise.allSettled([1, 2].map(async (request) => await joint.ask(request)));
		expect(answers).toEqual([
			{ status: 'rejected', reason: new Error('odd 1') },
			{ status: 'fulfilled', value: 2 },
		]);
		const short = new JointCalls<number, number>(5, async () => [{ value: 1 }]);
		const failed = await Promise.allSettled([1, 2].map(async (request) => await short.ask(request)));
		expect(failed.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'answered'))).toEqual([
			'A joint call answered 1 of 2 requests',
			'A joint call answered 1 of 2 requests',
		]);
		// It keeps working after a failure.
		const thrown = new JointCalls<number, number>(5, async (requests) => {
			if (requests.includes(0)) throw new Error('store down');
			return requests.map((request) => ({ value: request }));
		});
		await expect(thrown.ask(0)).rejects.toThrow('store down');
		expect(await thrown.ask(3)).toBe(3);
	});
});

describe('RecordsFailure', () => {
	it('names what stays in the store, nothing when not said, and the reason of any failure', () => {
		const failure = recordsFailure('the test store', 'it broke', { unknown: [2] });
		expect([failure.store, failure.message, failure.name, failure.certain]).toEqual(['the test store', 'it broke', 'RecordsFailure', false]);
		expect(failure.kept).toEqual({ reserved: [], unknown: [2], notStarted: [] });
		expect(recordsFailure('s', 'r', { reserved: [1], notStarted: [3] }, true)).toMatchObject({ kept: { reserved: [1], unknown: [], notStarted: [3] }, certain: true });
		expect([reasonOf(new Error('a message')), reasonOf('a text'), reasonOf(42)]).toEqual(['a message', 'a text', '42']);
		const lost = new Error('answer lost');
		expect(mayHaveApplied(lost)).toBe(false);
		markMaybeApplied(lost);
		expect([mayHaveApplied(lost), mayHaveApplied('answer lost')]).toEqual([true, false]);
	});
});
