/**
 * The few calls of n8n's internal REST API (the editor's own) that scripts and checks need, as a
 * logged-in user: credential test, manual runs, executions, workflows. Checked with n8n 2.41.0.
 * Every answer comes wrapped as `{ data: … }`.
 */

export interface ExecutionSummary {
	id: string;
	workflowId: string;
	status: string;
	mode: string;
	finished?: boolean;
}

export interface WorkflowSummary {
	id: string;
	name: string;
	active: boolean;
	isArchived?: boolean;
}

const FINISHED = new Set(['success', 'error', 'crashed', 'canceled']);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export class N8nRest {
	constructor(
		readonly url: string,
		private readonly cookie: string,
	) {}

	async call<T>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await fetch(`${this.url}/rest/${path.replace(/^\//, '')}`, {
			method,
			headers: { cookie: this.cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		if (!response.ok) throw new Error(`${method} /rest/${path} answered ${response.status}: ${text.slice(0, 1000)}`);
		return (JSON.parse(text) as { data: T }).data;
	}

	/** Node type names the editor offers (`/types/nodes.json`, outside /rest). */
	async nodeTypeNames(): Promise<string[]> {
		const response = await fetch(`${this.url}/types/nodes.json`, { headers: { cookie: this.cookie } });
		if (!response.ok) throw new Error(`GET /types/nodes.json answered ${response.status}`);
		return ((await response.json()) as Array<{ name: string }>).map((type) => type.name);
	}

	/** The newest version of a node type the editor offers: what a node added in the editor gets. */
	async newestVersion(typeName: string): Promise<number> {
		const response = await fetch(`${this.url}/types/nodes.json`, { headers: { cookie: this.cookie } });
		if (!response.ok) throw new Error(`GET /types/nodes.json answered ${response.status}`);
		const versions = ((await response.json()) as Array<{ name: string; version: number | number[] }>).filter((type) => type.name === typeName).flatMap((type) => [type.version].flat());
		if (versions.length === 0) throw new Error(`the editor offers no node type ${typeName}`);
		return Math.max(...versions);
	}

	/** What the credential's Test button does: the stored data (secrets blanked), tested by the credential's own test. */
	async testCredential(id: string): Promise<{ status: string; message: string }> {
		const stored = await this.call<Record<string, unknown>>('GET', `credentials/${id}?includeData=true`);
		return await this.call('POST', 'credentials/test', { credentials: stored });
	}

	async workflows(): Promise<WorkflowSummary[]> {
		return await this.call('GET', 'workflows');
	}

	async createWorkflow(workflow: Record<string, unknown>): Promise<WorkflowSummary> {
		return await this.call('POST', 'workflows', workflow);
	}

	async executions(): Promise<ExecutionSummary[]> {
		const page = await this.call<{ results: ExecutionSummary[] }>('GET', `executions?limit=100`);
		return page.results;
	}

	/** Runs a stored workflow from one of its trigger nodes, as "Execute workflow" in the editor does; returns the execution id. */
	async runWorkflow(workflowId: string, triggerNode: string): Promise<string> {
		const started = await this.call<{ executionId?: string }>('POST', `workflows/${workflowId}/run`, { triggerToStartFrom: { name: triggerNode } });
		if (!started.executionId) throw new Error(`running ${workflowId} from ${triggerNode} started no execution: ${JSON.stringify(started)}`);
		return started.executionId;
	}

	/** Waits for an execution to finish and returns its summary. */
	async finishedExecution(executionId: string, timeoutMs = 60_000): Promise<ExecutionSummary> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const execution = await this.call<ExecutionSummary>('GET', `executions/${executionId}`);
			if (FINISHED.has(execution.status)) return execution;
			if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${execution.status} after ${timeoutMs / 1000} s`);
			await sleep(250);
		}
	}
}
