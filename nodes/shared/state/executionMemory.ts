import type { IExecuteFunctions } from 'n8n-workflow';

import { GatewayFailure } from '../errors/failures';
import { registerProcessState } from './processState';
import { startSweep } from './sweep';

/**
 * Every piece of state the nodes keep, how long it lives and where. Nothing else in the package
 * keeps state between calls. The durations of what outlives an execution are stated once, in
 * docs/retention.md, whose test compares them with the constants.
 *
 * | lifetime           | what                                                     | where                                      |
 * |--------------------|----------------------------------------------------------|--------------------------------------------|
 * | one call           | retry attempts, timeout budget                           | locals in transport/                       |
 * | one node run       | the run's bill tally                                     | money/bill.ts, by the execute context      |
 * | one node run       | sends and changes (Retry On Fail keeps the run index,    | ExecutionMemory (below), keyed by runKey():|
 * |                    | so a re-run finds them; a loop raises it: a new send)    | node + run index + item                    |
 * | one execution      | answers to identical paid questions (shared by runs and  | ExecutionMemory, by execution id; a sweep  |
 * |                    | nodes), one copy of their short texts                    | forgets idle ones (MEMORY_BOUNDS)          |
 * | one execution      | money spent per account (the spending cap), kept         | the durable store, same pick as below      |
 * |                    | for long Waits (money/ledger.ts)                         | (survives the sweep and other workers)     |
 * | across executions  | money spent per account and China day and month (the     | the durable store, same pick               |
 * |                    | budgets: money/ledger.ts)                                |                                            |
 * | across executions  | usage counts per account and China day and month, for    | the durable store, same pick; deliveries   |
 * |                    | Usage → Get (usage/counts.ts)                            | in the store the SMS Trigger opens         |
 * | across executions  | SMS send records: each item's send (reserved, outcome    | the durable store (store/durableStore.ts), |
 * |                    | unknown, sent; released = gone) by node, execution, run  | picked by store/openStore.ts: the          |
 * |                    | index and item; each message for the repeat window; per- | credential's Redis, n8n's queue Redis, an  |
 * |                    | number counts per calendar window; signature and         | SQLite file in n8n's user folder, else     |
 * |                    | template creates (store/sendRecords/)                    | this process's memory (said in the output) |
 * | across executions  | paid answers for Reuse Answers For (hours), by           | the durable store, same pick               |
 * |                    | credential, operation and request (lookups/reuse.ts)     |                                            |
 * | across executions  | what each node output before, for Only New and Only When | the durable store, same pick               |
 * |                    | Changed, per node and key (lookups/onlyNew.ts)           |                                            |
 * | across executions  | telephone identifications per credential and China day   | the durable store, same pick               |
 * |                    | (lookups/telephoneQuota.ts)                              |                                            |
 * | across executions  | each SMS with a task ID: its Reference, workflow and     | the store the SMS Trigger opens (n8n's     |
 * |                    | execution, and whether its final report arrived          | queue Redis, else SQLite, else memory;     |
 * |                    | (store/sendsByTask.ts)                                   | never the credential's Redis)              |
 * | across executions  | callbacks that already started the trigger's workflow    | workflow static data, and per-process      |
 * |                    | (DataGatewaySmsTrigger/recentEvents.ts)                  | memory before it is saved                  |
 * | one n8n process    | HTTP connection pool, limiter per credential, Redis      | module memory (transport/pool.ts,          |
 * |                    | connections, open stores, secrets to redact              | limits/limiter.ts, store/redis/, store/    |
 * |                    |                                                          | openStore.ts, errors/redact.ts)            |
 * | writes, then 30 s  | an open SQLite store's checkpoint thread                 | a worker thread (store/sqliteCheckpoints)  |
 * | all processes      | the credential's rate and 429 pauses, when the           | Redis (limits/sharedRate.ts)               |
 * |                    | credential names a Shared Redis URL                      |                                            |
 */

/**
 * A map of one execution's memory: every read or write marks the execution as in use, and the
 * entries of `answers` maps are counted against MEMORY_BOUNDS.answers.
 */
class MemoryMap<K, V> extends Map<K, V> {
	constructor(
		private readonly owner: ExecutionMemory,
		private readonly counted: boolean,
	) {
		super();
	}

	override get(key: K): V | undefined {
		this.owner.touchedAt = Date.now();
		return super.get(key);
	}

	override has(key: K): boolean {
		this.owner.touchedAt = Date.now();
		return super.has(key);
	}

	override set(key: K, value: V): this {
		this.owner.touchedAt = Date.now();
		const added = !super.has(key);
		super.set(key, value);
		if (added && this.counted) answerEntriesAdded(this.owner, 1);
		return this;
	}

	override delete(key: K): boolean {
		const deleted = super.delete(key);
		if (deleted && this.counted) answerEntriesAdded(this.owner, -1);
		return deleted;
	}

	override clear(): void {
		if (this.counted) answerEntriesAdded(this.owner, -this.size);
		super.clear();
	}
}

/** What one execution remembers. An execution runs in one process, so memory is enough. */
export class ExecutionMemory {
	touchedAt = Date.now();
	/** False once forgotten: its maps no longer count against the bounds. */
	remembered = true;
	/** Answers to identical questions, shared by every run and node of the execution. */
	readonly answers: Map<string, SharedAnswer> = new MemoryMap(this, true);
	/** One copy of each short text of those answers (state/sharedStrings.ts), at most MAX_SHARED_STRINGS. */
	readonly strings = new Map<string, string>();
	/**
	 * SMS sends by runKey(node, run, item) without the request: a Retry On Fail re-run finds them
	 * even when its expressions evaluate differently; `request` is what was sent.
	 */
	readonly sends: Map<string, { outcome: Promise<string>; request: unknown }> = new MemoryMap(this, false);
	/** Creates, updates and deletes of signatures and templates, by runKey. */
	readonly changes: Map<string, { outcome: Promise<unknown> }> = new MemoryMap(this, false);
}

/**
 * One answer an execution remembers. While its call is in flight it holds the call's promise; once
 * the call succeeded, the value alone: a settled promise per answer would stay in memory for the
 * whole execution (about 50 bytes each, bench section 5). Answers are never promises themselves.
 */
export class SharedAnswer {
	private constructor(
		private state: unknown,
		/** The run that paid for it (runId); items of that run report its cost. */
		readonly paidByRun: string,
	) {}

	/** An answer already at hand (one kept from an earlier execution). */
	static of(value: unknown, paidByRun: string): SharedAnswer {
		return new SharedAnswer(value, paidByRun);
	}

	/** An answer still to come: holds `call` until it succeeds. */
	static pending(call: Promise<unknown>, paidByRun: string): SharedAnswer {
		return new SharedAnswer(call, paidByRun);
	}

	get answer(): Promise<unknown> {
		return this.state instanceof Promise ? this.state : Promise.resolve(this.state);
	}

	/** The call succeeded: its value replaces the promise. */
	settle(value: unknown): void {
		this.state = value;
	}
}

/**
 * How long and how much the process remembers, whether or not another call comes. Retry On Fail
 * re-runs within seconds (n8n caps its wait at 5 s); a longer memory would only hold finished
 * executions. Every read or write of an execution's memory marks it as in use.
 * - `idleMs`: an execution untouched this long is forgotten whole, by a timer every `sweepMs`.
 * - `answers`: the paid answers kept in all; above it the answers (only: they can be asked again,
 *   while sends and changes guard against doing something twice) of the executions untouched
 *   longest are dropped, oldest first, if untouched for `answersIdleMs`.
 * - `executions`: above it the executions untouched longest are forgotten whole, if untouched for
 *   `executionsIdleMs`.
 * In-use executions are never cut short: the bounds may be passed while all are in use.
 */
export const MEMORY_BOUNDS = {
	idleMs: 30 * 60_000,
	sweepMs: 60_000,
	answers: 20_000,
	answersIdleMs: 60_000,
	executions: 2_000,
	executionsIdleMs: 5 * 60_000,
};

const memories = new Map<string, ExecutionMemory>();
let rememberedAnswers = 0;
let sweepTimer: { stop(): void } | undefined;
/** While every execution is in use the bound stays passed: check again only after this many more answers, not at each. */
const ANSWER_CHECK_STEP = 100;
let nextAnswerCheck = MEMORY_BOUNDS.answers + 1;

function answerEntriesAdded(memory: ExecutionMemory, count: number) {
	if (!memory.remembered) return;
	rememberedAnswers += count;
	if (count > 0 && rememberedAnswers >= nextAnswerCheck) enforceMemoryBounds();
}

function forget(executionId: string, memory: ExecutionMemory) {
	memories.delete(executionId);
	rememberedAnswers -= memory.answers.size;
	memory.remembered = false;
}

/** Forgets idle executions, then cuts what is above the bounds, least recently used first. */
export function enforceMemoryBounds(now = Date.now()): void {
	for (const [id, memory] of memories) if (now - memory.touchedAt > MEMORY_BOUNDS.idleMs) forget(id, memory);
	if (memories.size > MEMORY_BOUNDS.executions || rememberedAnswers > MEMORY_BOUNDS.answers) {
		const oldestFirst = [...memories].sort(([, a], [, b]) => a.touchedAt - b.touchedAt);
		for (const [id, memory] of oldestFirst) {
			if (memories.size <= MEMORY_BOUNDS.executions) break;
			if (now - memory.touchedAt < MEMORY_BOUNDS.executionsIdleMs) break;
			forget(id, memory);
		}
		for (const [, memory] of oldestFirst) {
			if (rememberedAnswers <= MEMORY_BOUNDS.answers) break;
			if (now - memory.touchedAt < MEMORY_BOUNDS.answersIdleMs) break;
			if (memory.remembered) memory.answers.clear();
		}
	}
	nextAnswerCheck = Math.max(MEMORY_BOUNDS.answers, rememberedAnswers) + (rememberedAnswers > MEMORY_BOUNDS.answers ? ANSWER_CHECK_STEP : 1);
	if (memories.size === 0 && sweepTimer) {
		sweepTimer.stop();
		sweepTimer = undefined;
	}
}

/** What the process remembers now (tests read it through nodes/shared/testing.ts). */
export function executionMemoryStats(): { executions: number; answers: number } {
	return { executions: memories.size, answers: rememberedAnswers };
}

export function executionMemory(ctx: IExecuteFunctions): ExecutionMemory {
	// Without an execution id there is nothing to share with a re-run; a private memory keeps runs apart.
	const executionId = ctx.getExecutionId?.() || `unscoped-${Date.now()}-${Math.random()}`;
	let memory = memories.get(executionId);
	if (!memory) {
		memory = new ExecutionMemory();
		memories.set(executionId, memory);
		// The sweep runs whether or not another call comes, and stops when nothing is remembered.
		sweepTimer ??= startSweep(() => enforceMemoryBounds(), MEMORY_BOUNDS.sweepMs);
		if (memories.size > MEMORY_BOUNDS.executions) enforceMemoryBounds();
	}
	memory.touchedAt = Date.now();
	return memory;
}

registerProcessState('executionMemory', () => {
	for (const [id, memory] of memories) forget(id, memory);
	enforceMemoryBounds();
});

/**
 * The node's run index within the execution: n8n raises it for each run (loops) and keeps it when
 * Retry On Fail re-runs the node. n8n-core's execute context has it as a property; the data proxy
 * is the documented but slower way, used only when the property is missing.
 */
export function runIndexOf(ctx: IExecuteFunctions): number {
	const direct = (ctx as unknown as { runIndex?: unknown }).runIndex;
	if (typeof direct === 'number') return direct;
	try {
		const proxied = ctx.getWorkflowDataProxy(0).$runIndex;
		return typeof proxied === 'number' ? proxied : 0;
	} catch {
		return 0;
	}
}

/** Names one run of one node in one execution. */
export function runIdOf(ctx: IExecuteFunctions): string {
	return `${ctx.getExecutionId?.() ?? ''}|${ctx.getNode().name}|run ${runIndexOf(ctx)}`;
}

/** Names one item's call in one run: the same under Retry On Fail, new in the next loop run. */
export function runKey(ctx: IExecuteFunctions, itemIndex: number, request: string, nodeName = ctx.getNode().name): string {
	return `${nodeName}|run ${runIndexOf(ctx)}|item ${itemIndex}|${request}`;
}

/**
 * The answer kept under `key`, or a new one from `load`; a failed answer is dropped so a later ask
 * tries again. `loaded` says whether this call made the request.
 */
export function sharedAnswer<T>(
	answers: Map<string, SharedAnswer>,
	key: string,
	runId: string,
	load: () => Promise<T>,
): { answer: Promise<T>; entry: SharedAnswer } {
	const found = answers.get(key);
	if (found) return { answer: found.answer as Promise<T>, entry: found };
	const answer = load();
	const created = SharedAnswer.pending(answer, runId);
	answers.set(key, created);
	answer.then(
		(value) => created.settle(value),
		() => {
			if (answers.get(key) === created) answers.delete(key);
		},
	);
	return { answer, entry: created };
}

/** Whether a failed non-idempotent call certainly did not take effect, so that making it again is safe. */
export function callCertainlyFailed(error: unknown): boolean {
	if (!(error instanceof GatewayFailure)) return false;
	if (error.kind === 'not-sent') return true; // failed before the request was written
	if (error.kind === 'gateway-code') return true; // the gateway answered and refused
	if (error.kind === 'network') return true; // for non-idempotent calls the transport says 'network' only when nothing left
	return error.kind === 'http-status' && (error.httpStatus ?? 500) < 500;
}

/**
 * Keeps a call's outcome under `key`, so that a re-run finds it instead of calling again; forgets
 * it only when the call certainly did not take effect.
 */
export function rememberOutcome<T, Entry extends { outcome: Promise<T> }>(memory: Map<string, Entry>, key: string, entry: Entry): Promise<T> {
	memory.set(key, entry);
	entry.outcome.catch((error) => {
		if (callCertainlyFailed(error) && memory.get(key) === entry) memory.delete(key);
	});
	return entry.outcome;
}
