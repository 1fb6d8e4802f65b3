/** What every call would cost at the gateway's prices (docs/gateway-api.md#prices), so tests and benchmarks can count billed calls. */
export interface PathTotals {
	calls: number;
	billedCalls: number;
	costYuan: number;
	rejected429: number;
	faulted: number;
	deliveredSegments: number;
}

export interface LedgerEntry {
	at: number;
	path: string;
	/** A label for the account, never the appCode itself. */
	account: string;
	code: number | null;
	kind: 'call' | 'rejected429' | 'faulted' | 'delivery';
	billed: boolean;
	costYuan: number;
	/** For SMS sends: the number and the template variables asked for, to count texts per person. */
	phone?: string;
	params?: string;
}

const MAX_ENTRIES_KEPT = 20_000;

function emptyTotals(): PathTotals {
	return { calls: 0, billedCalls: 0, costYuan: 0, rejected429: 0, faulted: 0, deliveredSegments: 0 };
}

export class Ledger {
	private entries: LedgerEntry[] = [];
	private totals = emptyTotals();
	private byPath: Record<string, PathTotals> = {};

	record(entry: Omit<LedgerEntry, 'at'>, segments = 0) {
		const full = { ...entry, at: Date.now() };
		if (this.entries.length < MAX_ENTRIES_KEPT) this.entries.push(full);
		const pathTotals = (this.byPath[entry.path] ??= emptyTotals());
		for (const totals of [this.totals, pathTotals]) {
			if (entry.kind !== 'delivery') totals.calls++;
			if (entry.kind === 'rejected429') totals.rejected429++;
			if (entry.kind === 'faulted') totals.faulted++;
			if (entry.billed) totals.billedCalls++;
			totals.costYuan = Math.round((totals.costYuan + entry.costYuan) * 10000) / 10000;
			totals.deliveredSegments += segments;
		}
	}

	snapshot() {
		return { totals: { ...this.totals }, byPath: structuredClone(this.byPath), calls: [...this.entries] };
	}

	reset() {
		this.entries = [];
		this.totals = emptyTotals();
		this.byPath = {};
	}
}
