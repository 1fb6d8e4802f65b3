import type { StoreGuess } from '../durableStore';
import type { StagedValues } from './recordValues';

/**
 * What this node run's last update left under each key, and the store's time then: the guess
 * (StoreGuess) for its next update of the same keys. A claim finds its item's keys as its reserve
 * left them, so Redis checks and writes them in one round trip instead of reading them first. An
 * update that failed is forgotten: its writes may or may not have been applied.
 */
export class KnownValues {
	private readonly values = new Map<string, string | undefined>();
	private clock?: { storeNow: number; localNow: number };

	/** A guess when every key is known; the time is the store's at the last update plus the time since. */
	guess(keys: readonly string[]): StoreGuess | undefined {
		if (!this.clock || !keys.every((key) => this.values.has(key))) return undefined;
		return { values: keys.map((key) => this.values.get(key)), now: Math.round(this.clock.storeNow + performance.now() - this.clock.localNow) };
	}

	remember(keys: readonly string[], staged: StagedValues): void {
		for (const key of keys) this.values.set(key, staged.current(key));
		this.clock = { storeNow: staged.now, localNow: performance.now() };
	}

	/** Values read outside this run's updates: kept only until an update names the key (which then remembers what it left). */
	assume(keys: readonly string[], values: ReadonlyArray<string | undefined>): void {
		keys.forEach((key, index) => this.values.set(key, values[index]));
	}

	forget(keys: readonly string[]): void {
		for (const key of keys) this.values.delete(key);
	}
}
