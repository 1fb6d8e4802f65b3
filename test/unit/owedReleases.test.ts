/**
 * The releases a process owes a store (store/sendRecords/owedReleases.ts): records a lost store
 * answer may have left though nothing was sent, taken back when the store answers again. Jest's
 * fake timers drive the sweep, so nothing here waits for real time.
 */
import { oweRelease, paidRelease, payOwedReleases, type OwedRelease } from '../../nodes/shared/store/sendRecords/owedReleases';
import { forgetOwedReleases } from '../../nodes/shared/testing';

/** A debtor whose take-backs fail `failing` times, then succeed; counts how often it was asked. */
function debtor(failing = 0): OwedRelease & { asked: number } {
	const owes = { asked: 0, takeBack: async () => ++owes.asked > failing };
	return owes;
}

const FAR = () => Date.now() + 86_400_000;

afterEach(() => {
	forgetOwedReleases();
	jest.useRealTimers();
});

describe('releases owed to a store', () => {
	it('are paid before the next use of that store, once; another store is left alone', async () => {
		const first = debtor();
		const other = debtor();
		oweRelease('store A', first, FAR());
		oweRelease('store B', other, FAR());
		await payOwedReleases('store A');
		await payOwedReleases('store A');
		expect([first.asked, other.asked]).toEqual([1, 0]);
	});

	it('that still fail stay owed, and are asked again next time', async () => {
		const owes = debtor(1);
		oweRelease('store', owes, FAR());
		await payOwedReleases('store');
		await payOwedReleases('store');
		await payOwedReleases('store');
		expect(owes.asked).toBe(2);
	});

	it('past the time their records expire anyway are forgotten without asking', async () => {
		const owes = debtor();
		oweRelease('store', owes, Date.now() - 1);
		await payOwedReleases('store');
		expect(owes.asked).toBe(0);
	});

	it('paid by the debtor itself are forgotten; what others owe the same store stays owed', async () => {
		const [owes, other] = [debtor(), debtor()];
		oweRelease('store', owes, FAR());
		oweRelease('store', other, FAR());
		paidRelease('store', owes);
		await payOwedReleases('store');
		expect([owes.asked, other.asked]).toEqual([0, 1]);
	});

	it('are kept for at most 1,000 debtors per store: the one that owed first, and not since, goes first', async () => {
		const debtors = Array.from({ length: 1_001 }, () => debtor());
		for (const owes of debtors.slice(0, 1_000)) oweRelease('store', owes, FAR());
		// The first owes again: now the second is the oldest.
		oweRelease('store', debtors[0], FAR());
		oweRelease('store', debtors[1_000], FAR());
		await payOwedReleases('store');
		expect(debtors.filter((owes) => owes.asked === 0)).toEqual([debtors[1]]);
	});

	it('expire at the very millisecond their records do', async () => {
		jest.useFakeTimers();
		const owes = debtor();
		oweRelease('store', owes, Date.now());
		await payOwedReleases('store');
		expect(owes.asked).toBe(0);
	});

	it('owed again while a payment is under way stay owed', async () => {
		const later = debtor();
		const first = {
			asked: 0,
			takeBack: async () => {
				// A restart's worth of forgetting, then a new debt, while this one pays.
				forgetOwedReleases();
				oweRelease('store', later, FAR());
				return true;
			},
		};
		oweRelease('store', first, FAR());
		await payOwedReleases('store');
		await payOwedReleases('store');
		expect(later.asked).toBe(1);
	});

	it("paid by a debtor itself stop the sweep when none is left, and not before; paying twice, or where nothing is owed, is harmless", async () => {
		jest.useFakeTimers();
		const [a, b] = [debtor(), debtor()];
		oweRelease('store A', a, FAR());
		oweRelease('store B', b, FAR());
		paidRelease('store A', a);
		paidRelease('store A', a);
		paidRelease('store C', a);
		expect(jest.getTimerCount()).toBe(1);
		await jest.advanceTimersByTimeAsync(1_000);
		expect([a.asked, b.asked]).toEqual([0, 1]);
		expect(jest.getTimerCount()).toBe(0);
		forgetOwedReleases();
	});

	it('are retried by the sweep after 1 s, then twice as long each time while the store still fails, and no more once paid', async () => {
		jest.useFakeTimers();
		const owes = debtor(2);
		oweRelease('store', owes, FAR());
		await jest.advanceTimersByTimeAsync(999);
		expect(owes.asked).toBe(0);
		await jest.advanceTimersByTimeAsync(1);
		expect(owes.asked).toBe(1);
		// The next try waits 2 s (the sweep looks every second).
		await jest.advanceTimersByTimeAsync(1_000);
		expect(owes.asked).toBe(1);
		await jest.advanceTimersByTimeAsync(1_000);
		expect(owes.asked).toBe(2);
		// Then 4 s; the third try pays, and nothing is asked after it.
		await jest.advanceTimersByTimeAsync(3_000);
		expect(owes.asked).toBe(2);
		await jest.advanceTimersByTimeAsync(1_000);
		expect(owes.asked).toBe(3);
		await jest.advanceTimersByTimeAsync(600_000);
		expect(owes.asked).toBe(3);
		expect(jest.getTimerCount()).toBe(0);
	});

	it('are forgotten by a restart', async () => {
		const owes = debtor();
		oweRelease('store', owes, FAR());
		forgetOwedReleases();
		await payOwedReleases('store');
		expect(owes.asked).toBe(0);
	});
});
