/**
 * Issue 45: what the node keeps of an item once its answer is in. The execution remembers each
 * answer (a repeat in a later node or run does not pay again), but nothing else of the item: its
 * plan (request, question, choices) and the closures and promises of its call must be garbage once
 * the run has presented it, or a long batch carries them all through V8's young collections (bench
 * section 5). Checked with weak references and a full collection: deterministic, no timing.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { LookupCalls } from '../../nodes/shared/n8n/lookupSteps';
import { executionMemoryStats, forgetAllExecutionMemory } from '../../nodes/shared/testing';
import { useEmulator } from '../harness/emulator';
import type { Emulator } from '../emulator/server';
import { runWorkflow } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const ask = LookupCalls.prototype.ask;
afterEach(() => {
	LookupCalls.prototype.ask = ask;
	forgetAllExecutionMemory();
});

/** A full collection once the current job is over (a WeakRef read in this job keeps its target until then). */
async function collectGarbage(): Promise<void> {
	await new Promise((done) => setImmediate(done));
	collect();
}

const ITEMS = 20;

it("after a run, the execution remembers every item's answer and none of its plan or call", async () => {
	const plans: Array<WeakRef<object>> = [];
	const params: Array<WeakRef<object>> = [];
	// Wrapped by hand: a jest spy would keep every call's arguments.
	LookupCalls.prototype.ask = function (this: LookupCalls<never, unknown>, plan) {
		plans.push(new WeakRef(plan));
		params.push(new WeakRef(plan.params));
		return ask.call(this, plan);
	};
	const result = await runWorkflow({
		steps: [{ name: 'Identify', type: new DataGatewayTelephone(), parameters: { phoneNumber: '={{ $json.phone }}' } }],
		items: Array.from({ length: ITEMS }, (_, index) => ({ phone: `1390000${String(index).padStart(4, '0')}` })),
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url } },
	});
	expect(result.error).toBeUndefined();
	expect(result.json()).toHaveLength(ITEMS);
	expect(plans).toHaveLength(ITEMS);

	await collectGarbage();
	// The answers are kept for the execution (a repeat does not pay again)…
	expect(executionMemoryStats().answers).toBe(ITEMS);
	// …but no item's plan or request outlives the run.
	expect(plans.filter((plan) => plan.deref() !== undefined)).toHaveLength(0);
	expect(params.filter((request) => request.deref() !== undefined)).toHaveLength(0);
});
