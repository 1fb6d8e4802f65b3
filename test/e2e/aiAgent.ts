/**
 * The SMS and Telephone nodes as tools of n8n's own AI Agent, inside real n8n: a scripted chat model
 * (fakeChatModel.ts) asks for three sends at once, one with a bad number, and a lookup, then the first
 * send and the lookup again. Judged by the emulator's ledger (each message sent once, nothing paid for
 * the bad number or the repeat, the lookup asked once), by what
 * the model was shown (each tool result says what happened, the bad number's names the field and the
 * fix) and by the printed execution and n8n's log: the appCode appears, whole or in part, in none.
 */
import assert from 'node:assert/strict';

import { n8nCommand, type N8nLine } from '../../scripts/n8n-runtime';
import { FINAL_ANSWER, startFakeChatModel, type ChatRequest } from '../harness/fakeChatModel';
import { codeVariable, sendParameters } from '../harness/sms';
import { importFile, manualStart, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

const MODEL_CREDENTIAL = { id: 'dgw-fake-model', name: 'Fake chat model' };
const FIRST = '13900001111';
const SECOND = '13900002222';
const BAD = '12345';
const LOOKED_UP = '13800138000';

/** The tool calls the model asks for, turn by turn; then it answers in words. */
const SCRIPT = [
	[
		{ tool: /sms/i, args: { phone: FIRST, code: '4711' } },
		{ tool: /sms/i, args: { phone: SECOND, code: '4712' } },
		{ tool: /sms/i, args: { phone: BAD, code: '4713' } },
		{ tool: /identify/i, args: { phoneNumber: LOOKED_UP } },
	],
	[
		{ tool: /sms/i, args: { phone: FIRST, code: '4711' } },
		{ tool: /identify/i, args: { phoneNumber: LOOKED_UP } },
	],
];

function agentWorkflow(options: MoneySafetyOptions, line: N8nLine) {
	const langchain = '@n8n/n8n-nodes-langchain';
	const sms = {
		id: 'sms-tool',
		name: 'Send SMS',
		type: `${options.typePrefix}dataGatewaySmsTool`,
		typeVersion: 1.4,
		position: [440, 200],
		parameters: sendParameters(options.emulator, {
			phone: "={{ $fromAI('phone', 'The mobile number to text, 11 digits', 'string') }}",
			variables: codeVariable("={{ $fromAI('code', 'The login code to text', 'string') }}"),
			// A tool call is a run of its own, like a loop's next pass: within the execution the per-number
			// limits stop a repeat, not the Repeat Window. One an hour keeps the check off a minute's turn.
			sendOptions: { perHour: 1 },
		}),
		credentials: { dataGatewayApi: { id: options.credentialId, name: 'Data Gateway' } },
		// n8n 1.x hands the model an empty result for a tool that fails; continuing gives it the error item.
		...(line === '1' ? { onError: 'continueRegularOutput' } : {}),
	};
	const identify = {
		id: 'identify-tool',
		name: 'Identify Number',
		type: `${options.typePrefix}dataGatewayTelephoneTool`,
		typeVersion: 1.4,
		position: [660, 200],
		parameters: { phoneNumber: "={{ $fromAI('phoneNumber', 'The mobile number to identify, 11 digits', 'string') }}", simplify: true },
		credentials: sms.credentials,
	};
	return {
		id: 'dgwAiAgent',
		name: 'AI Agent sends SMS',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			manualStart,
			{
				id: 'agent',
				name: 'Agent',
				type: `${langchain}.agent`,
				typeVersion: line === '2' ? 3 : 2.2,
				position: [220, 0],
				parameters: { promptType: 'define', text: `Text the login code to ${FIRST} and ${SECOND}.`, options: {} },
			},
			{
				id: 'model',
				name: 'Model',
				type: `${langchain}.lmChatOpenAi`,
				typeVersion: 1.2,
				position: [220, 200],
				parameters: { model: { __rl: true, mode: 'id', value: 'fake-model' }, options: {} },
				credentials: { openAiApi: MODEL_CREDENTIAL },
			},
			sms,
			identify,
		],
		connections: {
			Start: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
			Model: { ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]] },
			'Send SMS': { ai_tool: [[{ node: 'Agent', type: 'ai_tool', index: 0 }]] },
			'Identify Number': { ai_tool: [[{ node: 'Agent', type: 'ai_tool', index: 0 }]] },
		},
		pinData: {},
	};
}

/** Every run of `length` characters of the appCode: none may show anywhere. */
function partsOf(secret: string, length = 7): string[] {
	return Array.from({ length: secret.length - length + 1 }, (_, at) => secret.slice(at, at + length));
}

/** What the model was shown for each tool call, by the call's ID (`call_<turn>_<index>` in SCRIPT). */
function toolResults(requests: ChatRequest[]): Map<string, string> {
	const results = new Map<string, string>();
	for (const message of requests.at(-1)?.messages ?? []) if (message.role === 'tool' && message.tool_call_id) results.set(message.tool_call_id, typeof message.content === 'string' ? message.content : JSON.stringify(message.content));
	return results;
}

export async function checkAiAgent(options: MoneySafetyOptions, line: N8nLine): Promise<void> {
	const { emulator, log } = options;
	const model = await startFakeChatModel(SCRIPT);
	try {
		await importFile(options, 'credentials', 'fake-model', [{ ...MODEL_CREDENTIAL, type: 'openAiApi', data: { apiKey: 'sk-fake-key', url: model.url } }]);
		await importFile(options, 'workflow', 'ai-agent', agentWorkflow(options, line));
		emulator.resetLedger();
		const execution = await n8nCommand(options.runtime, ['execute', '--id=dgwAiAgent', '--rawOutput'], options.environment);
		assert.equal(execution.code, 0, `the agent's workflow failed:\n${execution.stdout.slice(-3000)}\n${execution.stderr.slice(-2000)}`);
		const run = parsePrintedRun<{ status?: string; data: { resultData: { runData: Record<string, Array<{ data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>> } } }>(execution.stdout);
		const agentOutput = run.data.resultData.runData.Agent?.at(-1)?.data?.main?.[0]?.[0]?.json;
		assert.equal(agentOutput?.output, FINAL_ANSWER, `the agent ended with the model's answer: ${JSON.stringify(agentOutput)}`);

		const sends = emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call');
		const texts = sends.map((call) => `${call.phone} ${call.params}`).sort();
		assert.equal(sends.length, 2, `one send for each good number, none for ${BAD} or the repeat: ${JSON.stringify(sends)}`);
		assert.match(texts[0], new RegExp(`^${FIRST} .*4711`), `the first number got its code from the model: ${texts[0]}`);
		assert.match(texts[1], new RegExp(`^${SECOND} .*4712`), `the second number got its code from the model: ${texts[1]}`);

		const requests = model.requests();
		assert.equal(requests.length, SCRIPT.length + 1, `the model was asked ${requests.length} times: ${JSON.stringify(requests.map((request) => request.messages))}`);
		const shown = toolResults(requests);
		const result = (id: string) => shown.get(id) ?? '';
		for (const id of ['call_0_0', 'call_0_1']) assert.match(result(id), /"taskId":"\w+","sent":true/, `the model saw the task ID of ${id}: ${result(id)}`);
		assert.match(result('call_0_2'), /Phone Number \\"12345\\" is not a domestic mobile number/, `the model saw which field was wrong: ${result('call_0_2')}`);
		assert.match(result('call_1_0'), new RegExp(`not sent: this would be message 2 to ${FIRST} in this calendar (minute|hour)`), `the model saw the repeat was not sent again: ${result('call_1_0')}`);
		// The same number looked up twice in one execution: asked once (of the free daily quota), the same answer both times.
		assert.equal(emulator.ledger().byPath['/telecom/identify']?.calls, 1, 'one lookup call for the number asked twice');
		assert.match(result('call_0_3'), new RegExp(LOOKED_UP), `the model saw the lookup: ${result('call_0_3')}`);
		assert.equal(result('call_1_1'), result('call_0_3'), 'the second lookup shows the first answer');

		for (const part of partsOf(emulator.demo.appCode)) {
			assert.ok(!requests.some((request) => request.raw.includes(part)), `the model was never shown "${part}" of the appCode`);
			assert.ok(!execution.stdout.includes(part), `the printed execution holds no "${part}" of the appCode`);
			assert.ok(!execution.stderr.includes(part), `n8n's log holds no "${part}" of the appCode`);
		}
		log(`AI Agent: 3 SMS tool calls and a lookup at once (one bad number), then both again (the send refused by the per-number limit): 2 sends with the codes the model gave and 1 lookup call, each task ID and refusal shown to the model, no part of the appCode`);
	} finally {
		await model.close();
	}
}
