import type { INodeParameters } from 'n8n-workflow';

/** Any gateway emulator (in-process, child process or for real n8n): its demo account's approved signature and template. */
export interface DemoAccount {
	demo: { signatureId: string; templateId: string };
}

/** The template's one variable, `code`. */
export const codeVariable = (value: string) => ({ variable: [{ name: 'code', value }] });

/** An SMS Send of the demo signature and template to each item's `phone`, code 1234; `extra` overrides any parameter. */
export function sendParameters(emulator: DemoAccount, extra: INodeParameters = {}): INodeParameters {
	return {
		resource: 'message',
		operation: 'send',
		signId: Number(emulator.demo.signatureId),
		templateId: Number(emulator.demo.templateId),
		phone: '={{ $json.phone }}',
		variablesInput: 'keyValue',
		variables: codeVariable('1234'),
		...extra,
	};
}
