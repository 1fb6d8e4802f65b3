import type { IDataObject, INode, INodeExecutionData, IRun } from 'n8n-workflow';

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

/** Reads a finished run the way a user reads it in n8n: items per step and output, runs, the stopping error. */
export function resultOf(run: IRun, lastStep: string): WorkflowRunResult {
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
