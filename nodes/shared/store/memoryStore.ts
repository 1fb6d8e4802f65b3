import type { DurableStore, StoreDecision } from './durableStore';
import { hostClock } from './hostClock';
import { checkWrittenKeys, lifetimeMs, phoneTag, storedKeyName } from './keyName';
import { startSweep } from '../state/sweep';

/** How often entries past their lifetime that nobody reads again are dropped. */
const SWEEP_MS = 60_000;

/**
 * The last resort: this process's memory, lost on restart and not shared with other processes.
 * Nodes that fall back to it say so in their hint. Entries are held under their stored names
 * (keyName.ts), as the other stores keep them: a dump of the process holds no number in a key.
 */
export class MemoryStore implements DurableStore {
	readonly kind = 'memory' as const;
	readonly label = "this n8n process's memory";
	private readonly entries = new Map<string, { value: string; expiresAt: number; phoneTag?: string }>();
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
		return keys.map((key) => this.valueOf(storedKeyName(key), now));
	}

	async update<T>(keys: readonly string[], decide: (values: Array<string | undefined>, now: number) => StoreDecision<T>): Promise<T> {
		const now = this.clock();
		const names = new Map(keys.map((key) => [key, storedKeyName(key)]));
		const { writes, result } = decide(keys.map((key) => this.valueOf(names.get(key) as string, now)), now);
		checkWrittenKeys(keys, writes);
		for (const write of writes) {
			const name = names.get(write.key) as string;
			if (write.value === null) this.entries.delete(name);
			else {
				const expiresAt = now + (lifetimeMs(write.ttlMs) ?? Infinity);
				// A rewrite that does not know the number keeps the entry's phone tag (as the other stores do).
				const tag = write.phone === undefined ? this.entries.get(name)?.phoneTag : phoneTag(write.phone);
				// Stryker disable next-line ConditionalExpression: a phoneTag of undefined is no tag either (erase compares it, a dump leaves it out).
				this.entries.set(name, { value: write.value, expiresAt, ...(tag === undefined ? {} : { phoneTag: tag }) });
			}
		}
		if (this.entries.size > 0) this.sweep ??= startSweep(() => this.dropExpired(), SWEEP_MS);
		return result;
	}

	/** Deletes every entry written about this phone number (StoreWrite.phone); returns how many. */
	async erasePhone(phone: string): Promise<number> {
		const tag = phoneTag(phone);
		let removed = 0;
		for (const [name, entry] of this.entries) if (entry.phoneTag === tag && this.entries.delete(name)) removed++;
		return removed;
	}

	/** What the process holds, as a memory dump would show it (tests of what is kept). */
	dump(): string {
		return JSON.stringify([...this.entries]);
	}

	private dropExpired() {
		const now = this.clock();
		for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
		if (this.entries.size === 0) {
			// Stryker disable next-line OptionalChaining: only the sweep's own timer calls this, so it is there.
			this.sweep?.stop();
			this.sweep = undefined;
		}
	}

	private valueOf(name: string, now: number): string | undefined {
		const entry = this.entries.get(name);
		if (!entry) return undefined;
		if (entry.expiresAt <= now) {
			this.entries.delete(name);
			return undefined;
		}
		return entry.value;
	}
}
