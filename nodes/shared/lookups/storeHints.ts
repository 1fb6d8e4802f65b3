import type { IExecuteFunctions } from 'n8n-workflow';

import type { DurableStore } from '../store/durableStore';
import { openDurableStore, storeFallbackNotice } from '../store/openStore';

/**
 * The durable store as a lookup run uses it: a store that fails costs a feature, never the run's
 * answers, and the run says so in a warning above its output. A run that relied on process memory
 * says that too (the store's own fallback notice), for what it kept is lost on restart and unknown to
 * other processes.
 */
export class StoreHints {
	private readonly warnings = new Set<string>();
	private opened?: Promise<DurableStore>;
	/** The store, once something meant for later runs was kept in it. */
	private reliedOn?: DurableStore;

	constructor(private readonly ctx: IExecuteFunctions) {}

	/** The store; a run that keeps something for later in process memory gets the notice, unless what it keeps is a `courtesy`. */
	async open({ courtesy = false } = {}): Promise<DurableStore> {
		const store = await (this.opened ??= openDurableStore(this.ctx));
		if (!courtesy) this.reliedOn = store;
		return store;
	}

	/**
	 * Runs `work` on the store; on failure warns "<feature> could not use <store>: <why>; <fallback>."
	 * and returns undefined. `courtesy` work (a count shown in the bill) does not call for the memory notice.
	 */
	async attempt<T>(feature: string, fallback: string, work: (store: DurableStore) => Promise<T>, { courtesy = false } = {}): Promise<T | undefined> {
		let label = 'the store';
		try {
			const store = await this.open({ courtesy });
			label = store.label;
			return await work(store);
		} catch (error) {
			this.warnings.add(`${feature} could not use ${label}: ${error instanceof Error ? error.message : String(error)}; ${fallback}.`);
			return undefined;
		}
	}

	show(): void {
		if (typeof this.ctx.addExecutionHints !== 'function') return;
		const hints: Array<{ message: string; type: 'warning'; location: 'outputPane' }> = [...this.warnings].map((message) => ({ message, type: 'warning', location: 'outputPane' }));
		const fallback = this.reliedOn && storeFallbackNotice(this.reliedOn);
		if (fallback) hints.push({ message: fallback, type: 'warning', location: 'outputPane' });
		try {
			if (hints.length > 0) this.ctx.addExecutionHints(...hints);
		} catch {
			// A hint is a courtesy: it must never fail a run that succeeded.
		}
	}
}
