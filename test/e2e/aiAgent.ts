/**
 * The SMS node as a tool of n8n's own AI Agent, inside real n8n: a scripted chat model (fakeChatModel.ts)
 * asks for two sends at once, one with a bad number, then the first send again. Judged by the
 * emulator's ledger (each message sent once, nothing paid for the bad number or the repeat), by what
 * the model was shown (each tool result says what happened, the bad number's names the field and the
 * fix) and by the printed execution: the appCode appears, whole or in part, in neither.
 */
import assert from 'node:assert/strict';

import { n8nCommand, type N8nLine } from '../../scripts/n8n-runtime';
import { FINAL_ANSWER, startFakeChatModel, type ChatRequest } from '../harness/fakeChatModel';
import { sendParameters } from '../harness/sms';
import { importFile, manualStart, type MoneySafetyOptions } from './moneySafety';
import { parsePrintedRun } from './printedRun';

const MODEL_CREDENTIAL = { id: 'dgw-fake-model', name: 'Fake chat model' };
const FIRST = '13900001111';
const SECOND = '13900002222';
const BAD = '12345';

/** The tool calls the model asks for, turn by turn; then it answers in words. */
const SCRIPT = [
	[
		{ tool: /sms/i, args: { phone: FIRST } },
		{ tool: /sms/i, args: { phone: SECOND } },
		{ tool: /sms/i, args: { phone: BAD } },
	],
	[{ tool: /sms/i, args: { phone: FIRST } }],
];

function agentWorkflow(options: MoneySafetyOptions, line: N8nLine) {
	const langchain = '@n8n/n8n-nodes-langchain';
	const sms = {
		id: 'sms-tool',
		name: 'Send SMS',
		type: `${options.typePrefix}dataGatewaySmsTool`,
		typeVersion: 1.4,
		position: [440, 200],
		parameters: sendParameters(options.emulator, { phone: "={{ $fromAI('phone', 'The mobile number to text, 11 digits', 'string') }}" }),
		credentials: { dataGatewayApi: { id: options.credentialId, name: 'Data Gateway' } },
		// n8n 1.x hands the model an empty result for a tool that fails; continuing gives it the error item.
		...(line === '1' ? { onError: 'continueRegularOutput' } : {}),
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
		],
		connections: {
			Start: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
			Model: { ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]] },
			'Send SMS': { ai_tool: [[{ node: 'Agent', type: 'ai_tool', index: 0 }]] },
		},
		pinData: {},
	};
}

/** Every run of `length` characters of the appCode: none may show anywhere. */
function partsOf(secret: string, length = 7): string[] {
	return Array.from({ length: secret.length - length + 1 }, (_, at) => secret.slice(at, at + length));
}

/** The tool results the model was shown in a request, by the number each call was for. */
function toolResults(request: ChatRequest): Map<string, string> {
	const phoneOfCall = new Map<string, string>();
	for (const message of request.messages) for (const call of message.tool_calls ?? []) phoneOfCall.set(call.id, String((JSON.parse(call.function.arguments) as { phone?: unknown }).phone));
	const results = new Map<string, string>();
	for (const message of request.messages) if (message.role === 'tool' && message.tool_call_id) results.set(`${phoneOfCall.get(message.tool_call_id)}#${results.size}`, typeof message.content === 'string' ? message.content : JSON.stringify(message.content));
	return results;
}

export async function checkAiAgent(options: MoneySafetyOptions, line: N8nLine): Promise<void> {
	const { emulator, log } = options;
	const model = await startFakeChatModel(SCRIPT);
	try {
		await importFile(options, 'credentials', 'fake-model', [{ ...MODEL_CREDENTIAL, type: 'openAiApi', data: { apiKey: 'sk-fake-key', url: model.url } }]);
		await importFile(options, 'workflow', 'ai-agent', agentWorkflow(options, line));
		emulator.resetLedger();
		const result = await n8nCommand(options.runtime, ['execute', '--id=dgwAiAgent', '--rawOutput'], options.environment);
		assert.equal(result.code, 0, `the agent's workflow failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
		const run = parsePrintedRun<{ status?: string; data: { resultData: { runData: Record<string, Array<{ data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>> } } }>(result.stdout);
		const agentOutput = run.data.resultData.runData.Agent?.at(-1)?.data?.main?.[0]?.[0]?.json;
		assert.equal(agentOutput?.output, FINAL_ANSWER, `the agent ended with the model's answer: ${JSON.stringify(agentOutput)}`);

		const sends = emulator.ledger().calls.filter((call) => call.path === '/sms/send' && call.kind === 'call');
		const phones = sends.map((call) => String(call.phone)).sort();
		assert.deepEqual(phones, [FIRST, SECOND], `one send for each good number, none for ${BAD} or the repeat: ${JSON.stringify(sends)}`);

		const requests = model.requests();
		assert.equal(requests.length, SCRIPT.length + 1, `the model was asked ${requests.length} times: ${JSON.stringify(requests.map((request) => request.messages))}`);
		const afterFirst = [...toolResults(requests[1])];
		const resultFor = (phone: string) => afterFirst.find(([key]) => key.startsWith(`${phone}#`))?.[1] ?? '';
		for (const phone of [FIRST, SECOND]) assert.match(resultFor(phone), /taskId/, `the model saw ${phone}'s task ID: ${resultFor(phone)}`);
		assert.match(resultFor(BAD), /Phone Number/, `the model saw which field was wrong: ${resultFor(BAD)}`);
		// The repeat meets the per-number limit (1 a minute) before the repeat window; either way the model reads it was not sent.
		const repeat = [...toolResults(requests[2])].at(-1)?.[1];
		assert.match(String(repeat), new RegExp(`${FIRST} in this calendar minute|skippedAsRepeat\\W+true`), `the model saw the repeat was not sent again: ${repeat}`);

		for (const part of partsOf(emulator.demo.appCode)) {
			assert.ok(!requests.some((request) => request.raw.includes(part)), `the model was never shown "${part}" of the appCode`);
			assert.ok(!result.stdout.includes(part), `the printed execution holds no "${part}" of the appCode`);
		}
		log(`AI Agent: 3 SMS tool calls at once (one bad number), then a repeat: 2 sends, the bad number's field named to the model, the repeat refused by the per-number limit, no part of the appCode shown`);
	} finally {
		await model.close();
	}
}
