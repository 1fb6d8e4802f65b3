import './n8nEnv';
import './freshStore';

import { ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import {
	createRunExecutionData,
	Workflow,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type INode,
	type INodeParameters,
	type INodeType,
	type IRun,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

import { resultOf, type WorkflowRunResult } from './workflowResult';
import { CUSTOM_PREFIX, INPUT_NODE_TYPE, LOOP_NODE_TYPE, nodeTypesFor, StaticCredentialsHelper } from './workflowTypes';

export { processedData } from './processedData';
export type { WorkflowRunResult } from './workflowResult';

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
	/** n8n's id of the credential the steps use ('test-credential' unless given): another id is another saved credential. */
	credentialId?: string;
	executionId?: string;
	/** Run the steps inside a loop (like Loop Over Items) that hands them this many items per run. */
	loopBatchSize?: number;
	/** How n8n started the execution: 'manual' unless given ('retry' for a retried execution, 'trigger' for a schedule). */
	mode?: WorkflowExecuteMode;
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
			credentials: { dataGatewayApi: { id: options.credentialId ?? 'test-credential', name: 'Test gateway' } },
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

	const hooks = new ExecutionLifecycleHooks(options.mode ?? 'manual', executionId, workflowData);
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
	const execution = new WorkflowExecute(additionalData, options.mode ?? 'manual', runExecutionData);
	await execution.processRunExecutionData(workflow);
	const run = await finished;

	const lastStep = options.steps[options.steps.length - 1]?.name ?? 'Input';
	return resultOf(run, lastStep);
}
