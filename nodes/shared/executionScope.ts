/**
 * Memory that lives for one workflow execution. n8n's Retry On Fail re-runs a node's whole
 * execute() with every item, so anything already paid for (a lookup answer, a sent SMS) is
 * remembered here by execution id and reused instead of being paid for again.
 */
export interface SendRecord {
	/** Settles with the gateway's task id, or rejects when the send failed or its outcome is unknown. */
	outcome: Promise<unknown>;
	phone: string;
	at: number;
}

export class ExecutionScope {
	readonly lookups = new Map<string, Promise<unknown>>();
	readonly sends = new Map<string, SendRecord>();
	/** Creates, updates and deletes of signatures and templates, by item and request. */
	readonly changes = new Map<string, { outcome: Promise<unknown> }>();
	touchedAt = Date.now();
}

/**
 * Executions idle for longer than this are forgotten. Retry On Fail re-runs within seconds (n8n
 * caps its wait at 5 s); a longer memory would only hold answers of finished executions.
 */
const SCOPE_IDLE_MS = 30 * 60 * 1000;
const scopes = new Map<string, ExecutionScope>();

export function executionScope(executionId: string): ExecutionScope {
	const now = Date.now();
	for (const [id, scope] of scopes) {
		if (now - scope.touchedAt > SCOPE_IDLE_MS) scopes.delete(id);
	}
	let scope = scopes.get(executionId);
	if (!scope) {
		scope = new ExecutionScope();
		scopes.set(executionId, scope);
	}
	scope.touchedAt = now;
	return scope;
}

/** The answer kept under `key`, or a new one from `load`; a failed answer is dropped so a later ask tries again. */
export function sharedAnswer<T>(answers: Map<string, Promise<unknown>>, key: string, load: () => Promise<T>): Promise<T> {
	let answer = answers.get(key) as Promise<T> | undefined;
	if (!answer) {
		answer = load();
		answers.set(key, answer);
		answer.catch(() => answers.delete(key));
	}
	return answer;
}
