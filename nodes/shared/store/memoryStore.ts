import type { DurableStore, StoreDecision } from './durableStore';
import { hostClock } from './hostClock';
import { checkWrittenKeys, lifetimeMs } from './keyName';
import { startSweep } from '../state/sweep';

/** How often entries past their lifetime that nobody reads again are dropped. */
const SWEEP_MS = 60_000;

/**
 * The last resort: this process's memory, lost on restart and not shared with other processes.
 * Nodes that fall back to it say so in their hint.
 */
export class MemoryStore implements DurableStore {
	readonly kind = 'memory' as const;
	readonly label = "this n8n process's memory";
	private readonly entries = new Map<string, { value: string; expiresAt: number }>();
	/** Runs while entries are held: a key never read again must not stay after its lifetime. */
	private sweep?: { stop(): void };

	constructor(private readonly clock: () => number = () => hostClock.now()) {}

	/** Entries held, expired ones not yet swept included. */
	get size(): number {
		return this.entries.size;
	}

	async now(): Promise<number> {
		return this.clock();
	}

	async read(keys: readonly string[]): Promise<Array<string | undefined>> {
		const now = this.clock();
		return keys.map((key) => this.valueOf(key, now));
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>): Promise<T> {
		const now = this.clock();
		const { writes, result } = decide(keys.map((key) => this.valueOf(key, now)), now);
		checkWrittenKeys(keys, writes);
		for (const write of writes) {
			if (write.value === null) this.entries.delete(write.key);
			else this.entries.set(write.key, { value: write.value, expiresAt: now + (lifetimeMs(write.ttlMs) ?? Infinity) });
		}
		if (this.entries.size > 0) this.sweep ??= startSweep(() => this.dropExpired(), SWEEP_MS);
		return result;
	}

	private dropExpired() {
		const now = this.clock();
		for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
		if (this.entries.size === 0) {
			this.sweep?.stop();
			this.sweep = undefined;
		}
	}

	private valueOf(key: string, now: number): string | undefined {
		const entry = this.entries.get(key);
		if (!entry) return undefined;
		if (entry.expiresAt <= now) {
			this.entries.delete(key);
			return undefined;
		}
		return entry.value;
	}
}
