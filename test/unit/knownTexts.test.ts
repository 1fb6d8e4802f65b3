/**
 * The signature and template texts an SMS item is checked and counted with (send/knownTexts.ts), on
 * staged runs against the emulator and a real catalogue store: where they come from, which free
 * queries that costs, the error that names why they were needed, and a run's reuse of them. Through
 * the engine: test/sms/send-batch.test.ts and test/sms/catalogueLength.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { IDataObject, INode } from 'n8n-workflow';

import { textsOf, type KnownTexts } from '../../nodes/DataGatewaySms/actions/message/send/knownTexts';
import type { SendRun } from '../../nodes/DataGatewaySms/actions/message/send/sendRun';
import { catalogueAccount, catalogueStore } from '../../nodes/DataGatewaySms/actions/catalogue/access';
import { STORE_FILE_VARIABLE } from '../../nodes/shared/store/hostEnvironment';
import { recordSightings } from '../../nodes/shared/store/reviewedCatalogue';
import { client, emulator, useEmulator } from '../transport/gatewayClient';

useEmulator();

const folder = mkdtempSync(join(tmpdir(), 'known-texts-'));
beforeAll(() => (process.env[STORE_FILE_VARIABLE] = join(folder, 'store.sqlite')));
afterAll(() => {
	delete process.env[STORE_FILE_VARIABLE];
	rmSync(folder, { recursive: true, force: true });
});

const DEMO_SIGNATURE = '数据网关';
const DEMO_TEMPLATE = '您的验证码是${code}，5分钟内有效。';
const UNKNOWN_ID = 987654;

/** One run of Send as its texts step reads it: the node's version, whether a cap or budget is set, a client on the emulator. */
function stagedRun({ typeVersion = 1.5, limited = false } = {}): SendRun {
	const node: INode = { id: 'n1', name: 'SMS', type: 'CUSTOM.dataGatewaySms', typeVersion, position: [0, 0], parameters: {} };
	const ctx = { getNode: () => node, getCredentials: async () => ({ appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url }) };
	return { ctx, node, client: client(), options: {}, memory: { answers: new Map() }, runId: 'run-1', meter: { limited } } as unknown as SendRun;
}

const demoIds = () => [Number(emulator.demo.signatureId), Number(emulator.demo.templateId)] as const;
const queries = () => {
	const { byPath } = emulator.ledger();
	return { sign: byPath['/sms/query_sign']?.calls ?? 0, template: byPath['/sms/query_template']?.calls ?? 0 };
};
const texts = async (run: SendRun, sendOptions: IDataObject, [signId, templateId] = demoIds(), itemIndex = 0) => await textsOf(run, itemIndex, signId, templateId, sendOptions);

/** The catalogue this account's runs read (SMS 1.4), holding other texts than the gateway's, so a test sees which was used. */
async function catalogueHolds(signature: string, template: string) {
	const ctx = stagedRun().ctx;
	const [store, account] = [await catalogueStore(ctx), await catalogueAccount(ctx)];
	await recordSightings(store, account, 'signature', [{ id: emulator.demo.signatureId, name: signature, seenBy: 'import' }]);
	await recordSightings(store, account, 'template', [{ id: emulator.demo.templateId, content: template, seenBy: 'import' }]);
}

beforeAll(async () => await catalogueHolds('目录签名', '目录模板${code}'));

describe('where an item’s texts come from', () => {
	it('Read Template: the gateway’s texts and reviews, one free query each', async () => {
		const known = await texts(stagedRun(), { readTemplate: true });
		expect(known).toEqual({ signature: DEMO_SIGNATURE, template: DEMO_TEMPLATE, from: 'gateway', read: { signatureStatus: 1, signatureError: null, templateStatus: 1, templateError: null } });
		expect(queries()).toEqual({ sign: 1, template: 1 });
	});

	it('both texts in Options: those, without a query, even with a cap', async () => {
		const given = { signatureText: '我的签名', templateContent: '模板${code}' };
		expect(await texts(stagedRun({ limited: true }), given)).toEqual({ signature: '我的签名', template: '模板${code}', from: 'options' });
		expect(queries()).toEqual({ sign: 0, template: 0 });
	});

	it('a cap with only Signature Text given: the template is read from the gateway, not the catalogue', async () => {
		const known = await texts(stagedRun({ limited: true, typeVersion: 1.4 }), { signatureText: '我的签名' });
		expect(known).toEqual({ signature: '我的签名', template: DEMO_TEMPLATE, from: 'gateway' });
		expect(queries()).toEqual({ sign: 1, template: 1 });
	});

	it('a cap with only Template Content given: the signature is read from the gateway', async () => {
		const known = await texts(stagedRun({ limited: true, typeVersion: 1.4 }), { templateContent: '模板${code}' });
		expect(known).toEqual({ signature: DEMO_SIGNATURE, template: '模板${code}', from: 'gateway' });
	});

	it('Refuse Content Warnings without a cap reads the gateway too: it checks the message as sent', async () => {
		const known = await texts(stagedRun({ typeVersion: 1.4 }), { refuseContentWarnings: true });
		expect(known).toEqual({ signature: DEMO_SIGNATURE, template: DEMO_TEMPLATE, from: 'gateway' });
	});

	it('before SMS 1.5, without a cap: the catalogue’s texts, no query', async () => {
		expect(await texts(stagedRun({ typeVersion: 1.4 }), {})).toEqual({ signature: '目录签名', template: '目录模板${code}', from: 'catalogue' });
		expect(await texts(stagedRun({ typeVersion: 1.4 }), { signatureText: '我的签名' })).toEqual({ signature: '我的签名', template: '目录模板${code}', from: 'catalogue' });
		expect(await texts(stagedRun({ typeVersion: 1.4 }), { templateContent: '模板${code}' })).toEqual({ signature: '目录签名', template: '模板${code}', from: 'catalogue' });
		expect(queries()).toEqual({ sign: 0, template: 0 });
	});

	it('before the catalogue (SMS 1.3): only what Options give, the length unknown', async () => {
		expect(await texts(stagedRun({ typeVersion: 1.3 }), { signatureText: '我的签名' })).toMatchObject({ signature: '我的签名', template: undefined });
		expect(queries()).toEqual({ sign: 0, template: 0 });
	});

	it('from SMS 1.5 without a cap: the template is read for the forbidden-content check, the signature too', async () => {
		expect(await texts(stagedRun(), {})).toEqual({ signature: DEMO_SIGNATURE, template: DEMO_TEMPLATE, from: 'gateway' });
		expect(await texts(stagedRun(), { templateContent: '模板${code}' })).toEqual({ signature: '目录签名', template: '模板${code}', from: 'catalogue' });
		expect(queries()).toEqual({ sign: 1, template: 1 });
	});

	it('from SMS 1.5, a template the gateway cannot give: the check goes on with the catalogue’s texts, no error', async () => {
		const known = await texts(stagedRun(), {}, [UNKNOWN_ID, UNKNOWN_ID]);
		expect(known).toEqual({ signature: undefined, template: undefined, from: 'catalogue' });
	});
});

describe('texts that are needed and cannot be read', () => {
	const refusal = async (run: SendRun, sendOptions: IDataObject) => {
		try {
			await texts(run, sendOptions, [Number(emulator.demo.signatureId), UNKNOWN_ID], 2);
		} catch (error) {
			return error as Error & { description?: string; context?: IDataObject };
		}
		throw new Error('expected the texts to be refused');
	};

	it('a cap or budget: the item’s error says the length is needed and how to give the texts', async () => {
		for (const typeVersion of [1.4, 1.5]) {
			const error = await refusal(stagedRun({ limited: true, typeVersion }), {});
			expect(error.message).toMatch(new RegExp(`^Item 3: the spending cap and budgets need the message length, and the signature ${emulator.demo.signatureId} or template ${UNKNOWN_ID} could not be read: .+`));
			expect(error.description).toBe(
				'The message was not sent. Check the Signature ID and Template ID, or give Signature Text and Template Content in Options so the texts are known without reading them.',
			);
			expect(error.context?.itemIndex).toBe(2);
		}
	});

	it('Refuse Content Warnings: the item’s error says the message text is needed', async () => {
		const error = await refusal(stagedRun({ typeVersion: 1.4 }), { refuseContentWarnings: true });
		expect(error.message).toMatch(/^Item 3: Refuse Content Warnings needs the message text, and the signature/);
	});
});

describe('a run keeps the texts it knows', () => {
	const given = { signatureText: '我的签名', templateContent: '模板${code}' };

	it('the next item with the same options object has them at once, without a turn of the event loop', async () => {
		const run = stagedRun({ limited: true });
		const first = textsOf(run, 0, ...demoIds(), given);
		expect(first).toBeInstanceOf(Promise);
		const known: KnownTexts = await first;
		expect(textsOf(run, 1, ...demoIds(), given)).toBe(known);
	});

	it('options that are another object (an expression per item), or another run, are read again', async () => {
		const run = stagedRun({ limited: true });
		await textsOf(run, 0, ...demoIds(), given);
		expect(textsOf(run, 1, ...demoIds(), { ...given })).toBeInstanceOf(Promise);
		expect(textsOf(stagedRun({ limited: true }), 0, ...demoIds(), given)).toBeInstanceOf(Promise);
	});

	it('another template in the same run has its own texts; the free queries are shared by the run’s items', async () => {
		const run = stagedRun();
		const options = { readTemplate: true };
		await texts(run, options);
		const other = await texts(run, options, [Number(emulator.demo.signatureId), Number(emulator.demo.templateWithoutVariablesId)]);
		expect(other.template).toBe('您的订单已发货，请注意查收。');
		await texts(run, { readTemplate: true });
		expect(queries()).toEqual({ sign: 1, template: 2 });
	});
});
