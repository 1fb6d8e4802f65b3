import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// n8n-core reads its user folder at import time, so point it at a throwaway folder first.
process.env.N8N_USER_FOLDER ??= mkdtempSync(join(tmpdir(), 'n8n-harness-'));
process.env.N8N_LOG_LEVEL ??= 'silent';

import { DataDeduplicationService, ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import {
	createRunExecutionData,
	ICredentialsHelper,
	NodeHelpers,
	Workflow,
	type DeduplicationItemTypes,
	type ICheckProcessedContextData,
	type ICheckProcessedOptions,
	type ICredentialDataDecryptedObject,
	type ICredentials,
	type IDataDeduplicator,
	type IDataObject,
	type IExecuteFunctions,
	type IHttpRequestOptions,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeProperties,
	type INodeType,
	type INodeTypes,
	type IRun,
	type IVersionedNodeType,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';

import { forgetSeenSlots } from '../../nodes/shared/recordsDatabase';

/** A tiny source node that emits the test's input items, so pairedItem links to a real parent. */
class InputItemsNode implements INodeType {
	description = {
		displayName: 'Input Items',
		name: 'harnessInputItems',
		group: ['input'],
		version: 1,
		description: 'Emits the items given in its parameter',
		defaults: { name: 'Input' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [{ displayName: 'Items', name: 'items', type: 'json', default: '[]' }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = JSON.parse(this.getNodeParameter('items', 0) as string) as IDataObject[];
		return [items.map((json) => ({ json }))];
	}
}

/**
 * A loop like n8n's Loop Over Items: output 0 "done" gets every item that came back, output 1
 * "loop" gets the next batch; each batch is a new run of the nodes inside the loop.
 */
class LoopNode implements INodeType {
	description = {
		displayName: 'Loop',
		name: 'harnessLoop',
		group: ['transform'],
		version: 1,
		description: 'Emits its input in batches, one run each',
		defaults: { name: 'Loop' },
		inputs: ['main'],
		outputs: ['main', 'main'],
		outputNames: ['done', 'loop'],
		properties: [{ displayName: 'Batch Size', name: 'batchSize', type: 'number', default: 1 }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const context = this.getContext('node') as { waiting?: INodeExecutionData[]; done?: INodeExecutionData[] };
		const batchSize = this.getNodeParameter('batchSize', 0) as number;
		if (context.waiting === undefined) {
			context.waiting = this.getInputData().map((item) => ({ json: item.json }));
			context.done = [];
		} else {
			context.done!.push(...this.getInputData().map((item) => ({ json: item.json })));
		}
		if (context.waiting.length === 0) {
			const done = context.done!;
			delete context.waiting;
			return [done, []];
		}
		return [[], context.waiting.splice(0, batchSize)];
	}
}

/**
 * n8n's processed-data store, in memory: what n8n keeps in its database table. It reads a node's
 * record, changes it and writes it back like n8n does, and outlives executions until reset.
 */
class MemoryDeduplicator implements IDataDeduplicator {
	readonly records = new Map<string, DeduplicationItemTypes[]>();
	calls = 0;

	private key(scope: string, context: ICheckProcessedContextData) {
		return `${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
	}

	async checkProcessedAndRecord(items: DeduplicationItemTypes[], scope: 'node' | 'workflow', context: ICheckProcessedContextData, options: ICheckProcessedOptions) {
		this.calls++;
		const stored = [...(this.records.get(this.key(scope, context)) ?? [])];
		const known = new Set(stored.map(String));
		const result = { new: [] as DeduplicationItemTypes[], processed: [] as DeduplicationItemTypes[] };
		for (const item of items) {
			if (known.has(String(item))) {
				result.processed.push(item);
			} else {
				result.new.push(item);
				stored.push(item);
			}
		}
		if (options.maxEntries) stored.splice(0, Math.max(0, stored.length - options.maxEntries));
		this.records.set(this.key(scope, context), stored);
		return result;
	}

	async removeProcessed(items: DeduplicationItemTypes[], scope: 'node' | 'workflow', context: ICheckProcessedContextData) {
		this.calls++;
		const drop = new Set(items.map(String));
		const stored = this.records.get(this.key(scope, context)) ?? [];
		this.records.set(this.key(scope, context), stored.filter((item) => !drop.has(String(item))));
	}

	async clearAllProcessedItems(scope: 'node' | 'workflow', context: ICheckProcessedContextData) {
		this.records.delete(this.key(scope, context));
	}

	async getProcessedDataCount(scope: 'node' | 'workflow', context: ICheckProcessedContextData) {
		return this.records.get(this.key(scope, context))?.length ?? 0;
	}
}

/** The store behind the nodes' processed-data helpers; persists across runWorkflow calls of one test. */
export const processedData = new MemoryDeduplicator();
void DataDeduplicationService.init(processedData);
// Each test starts with an empty store, as a fresh n8n database would.
// The slot counts a process saw are a hint kept beside the store; a fresh store forgets them too.
if (typeof beforeEach === 'function')
	beforeEach(() => {
		processedData.records.clear();
		forgetSeenSlots();
	});

const INPUT_NODE_TYPE = 'harness.inputItems';
const LOOP_NODE_TYPE = 'harness.loop';
const CUSTOM_PREFIX = 'CUSTOM.';

class StaticCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly credentials: Record<string, ICredentialDataDecryptedObject>) {
		super();
	}
	getParentTypes(): string[] {
		return [];
	}
	isCredentialUsableByNode(): boolean {
		return true;
	}
	async authenticate(_credentials: ICredentialDataDecryptedObject, _type: string, options: IHttpRequestOptions) {
		return options;
	}
	async preAuthentication() {
		return undefined;
	}
	async runPreAuthentication() {
		return undefined;
	}
	async getCredentials(): Promise<ICredentials> {
		throw new Error('not needed by these tests');
	}
	async getDecrypted(_additionalData: unknown, _nodeCredentials: unknown, type: string) {
		const data = this.credentials[type];
		if (!data) throw new Error(`The test gave no credentials of type ${type}`);
		return data;
	}
	async updateCredentials() {}
	async updateCredentialsOauthTokenData() {}
	getCredentialsProperties(): INodeProperties[] {
		return [];
	}
}

function nodeTypesFor(types: INodeType[]): INodeTypes {
	const byName = new Map<string, INodeType | IVersionedNodeType>([
		[INPUT_NODE_TYPE, new InputItemsNode()],
		[LOOP_NODE_TYPE, new LoopNode()],
	]);
	for (const type of types) byName.set(CUSTOM_PREFIX + type.description.name, type);
	return {
		getByName: (name) => {
			const type = byName.get(name);
			if (!type) throw new Error(`Unknown node type ${name}`);
			return type;
		},
		getByNameAndVersion: (name, version) => {
			const type = byName.get(name);
			if (!type) throw new Error(`Unknown node type ${name}`);
			return NodeHelpers.getVersionedNodeType(type, version);
		},
		getKnownTypes: () => ({}),
	};
}

export interface WorkflowStep {
	name: string;
	type: INodeType;
	parameters: INodeParameters;
	/** The node version the workflow was saved with; the newest when not given, as a new node gets. */
	typeVersion?: number;
	/** Node settings as the editor stores them: continueOnFail, retryOnFail, maxTries, waitBetweenTries, onError. */
	settings?: Partial<Pick<INode, 'continueOnFail' | 'retryOnFail' | 'maxTries' | 'waitBetweenTries' | 'onError' | 'alwaysOutputData'>>;
}

export interface WorkflowRunOptions {
	/** Run one after another: Input -> steps[0] -> steps[1] … */
	steps: WorkflowStep[];
	items: IDataObject[];
	credentials?: Record<string, ICredentialDataDecryptedObject>;
	executionId?: string;
	/** Run the steps inside a loop (like Loop Over Items) that hands them this many items per run. */
	loopBatchSize?: number;
}

export interface WorkflowRunResult {
	run: IRun;
	/**
	 * Output items of a step, by name (the last step when no name is given): the first output, or
	 * `output` 1 for the error output of a step whose On Error is "Continue (using error output)".
	 */
	items(stepName?: string, output?: number): INodeExecutionData[];
	/** Output items of every run of a step, run by run. */
	runs(stepName?: string): IDataObject[][];
	json(stepName?: string): IDataObject[];
	/** The error that stopped the workflow, as n8n reports it. */
	error?: { message: string; description?: string | null; node?: string; itemIndex?: number };
}

let executionCounter = 0;

/** Runs a real workflow through n8n-core's WorkflowExecute, as n8n runs it. */
export async function runWorkflow(options: WorkflowRunOptions): Promise<WorkflowRunResult> {
	const executionId = options.executionId ?? `test-${process.pid}-${++executionCounter}`;
	const inputNode: INode = {
		id: 'input',
		name: 'Input',
		type: INPUT_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: { items: JSON.stringify(options.items) },
	};
	const nodes: INode[] = [inputNode];
	const connections: IWorkflowBase['connections'] = {};
	let previous = inputNode.name;
	const loopNode: INode | undefined = options.loopBatchSize
		? { id: 'loop', name: 'Loop', type: LOOP_NODE_TYPE, typeVersion: 1, position: [100, 0], parameters: { batchSize: options.loopBatchSize } }
		: undefined;
	if (loopNode) {
		nodes.push(loopNode);
		connections[inputNode.name] = { main: [[{ node: loopNode.name, type: 'main', index: 0 }]] };
	}
	options.steps.forEach((step, index) => {
		const version = step.type.description.version;
		nodes.push({
			id: `step-${index}`,
			name: step.name,
			type: CUSTOM_PREFIX + step.type.description.name,
			typeVersion: step.typeVersion ?? (Array.isArray(version) ? Math.max(...version) : version),
			position: [200 * (index + 1), 0],
			parameters: step.parameters,
			credentials: { dataGatewayApi: { id: 'test-credential', name: 'Test gateway' } },
			...step.settings,
		});
		const into = [{ node: step.name, type: 'main' as const, index: 0 }];
		// Inside a loop the first step hangs on the loop's second output ("loop").
		connections[loopNode && index === 0 ? loopNode.name : previous] = { main: loopNode && index === 0 ? [[], into] : [into] };
		previous = step.name;
	});
	if (loopNode) connections[previous] = { main: [[{ node: loopNode.name, type: 'main', index: 0 }]] };

	const workflowData: IWorkflowBase = {
		id: 'test-workflow',
		name: 'Test workflow',
		active: false,
		isArchived: false,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		createdAt: new Date(),
		updatedAt: new Date(),
	} as IWorkflowBase;
	const workflow = new Workflow({
		id: workflowData.id,
		name: workflowData.name,
		nodes,
		connections,
		active: false,
		nodeTypes: nodeTypesFor(options.steps.map((step) => step.type)),
		settings: workflowData.settings,
	});

	const hooks = new ExecutionLifecycleHooks('manual', executionId, workflowData);
	const finished = new Promise<IRun>((resolve) => {
		hooks.addHandler('workflowExecuteAfter', async (fullRun) => resolve(fullRun));
	});
	const additionalData = {
		hooks,
		executionId,
		credentialsHelper: new StaticCredentialsHelper(options.credentials ?? {}),
		variables: {},
		currentNodeExecutionIndex: 0,
		restApiUrl: 'http://127.0.0.1:5678/rest',
		instanceBaseUrl: 'http://127.0.0.1:5678/',
		webhookBaseUrl: 'http://127.0.0.1:5678/webhook',
		webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://127.0.0.1:5678/webhook-test',
		formBaseUrl: 'http://127.0.0.1:5678/form',
		formWaitingBaseUrl: 'http://127.0.0.1:5678/form-waiting',
		formTestBaseUrl: 'http://127.0.0.1:5678/form-test',
		mcpBaseUrl: 'http://127.0.0.1:5678/mcp',
		mcpTestBaseUrl: 'http://127.0.0.1:5678/mcp-test',
		executeWorkflow: async () => {
			throw new Error('not needed by these tests');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		logAiEvent: () => {},
		startRunnerTask: async () => {
			throw new Error('not needed by these tests');
		},
	} as unknown as IWorkflowExecuteAdditionalData;

	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [{ node: inputNode, data: { main: [[{ json: {} }]] }, source: null }],
		},
	});
	const execution = new WorkflowExecute(additionalData, 'manual', runExecutionData);
	await execution.processRunExecutionData(workflow);
	const run = await finished;

	const lastStep = options.steps[options.steps.length - 1]?.name ?? 'Input';
	const items = (stepName = lastStep, output = 0): INodeExecutionData[] => {
		const taskData = run.data.resultData.runData[stepName];
		const lastRun = taskData?.[taskData.length - 1];
		return lastRun?.data?.main?.[output] ?? [];
	};
	const runError = run.data.resultData.error as
		| (Error & { description?: string | null; node?: INode; context?: { itemIndex?: number } })
		| undefined;
	return {
		run,
		items,
		runs: (stepName = lastStep) => (run.data.resultData.runData[stepName] ?? []).map((task) => (task.data?.main?.[0] ?? []).map((item) => item.json)),
		json: (stepName) => items(stepName).map((item) => item.json),
		error: runError
			? {
					message: runError.message,
					description: runError.description,
					node: runError.node?.name,
					itemIndex: runError.context?.itemIndex,
				}
			: undefined,
	};
}
