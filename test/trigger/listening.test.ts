import type { IDataObject, IHookFunctions, INode } from 'n8n-workflow';

import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { notStarted, post, report, serve, serveEachTest, started } from './callbacks';
import { publishWebhook } from './webhookServer';

serveEachTest();

const TOKEN = 'k3y_for-the-callback-url';
const CHINA_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+08:00$/;

/** The China wall-clock time of an instant, as the items write it. */
const chinaWallClock = (instant: number) => new Date(instant + 8 * 3_600_000).toISOString().slice(0, 16);

describe('version 1.2: the URL n8n shows is the whole callback URL', () => {
	it('the token is a segment of the path; that URL starts the workflow, another token is 401', async () => {
		const { url, starts } = await serve({ security: { token: TOKEN } }, { typeVersion: 1.2 });
		expect(url).toMatch(new RegExp(`/webhook/[^/]+/data-gateway-sms/${TOKEN}$`));
		expect(await post(url, report('U1'))).toEqual(started);
		expect(await post(url.replace(TOKEN, `${TOKEN}x`), report('U2'))).toEqual({ status: 401, body: { error: 'missing or wrong token' } });
		expect(starts).toHaveLength(1);
	});

	it('without a token the path is the plain one, as in 1.1', async () => {
		const { url } = await serve({}, { typeVersion: 1.2 });
		expect(url).toMatch(/\/webhook\/[^/]+\/data-gateway-sms$/);
		expect(await post(url, report('U3'))).toEqual(started);
	});

	it('saved 1.1 triggers keep the plain path with ?token=, and UTC receivedAt', async () => {
		const { url, starts } = await serve({ security: { token: TOKEN } }, { typeVersion: 1.1 });
		expect(url).toMatch(/\/data-gateway-sms$/);
		expect(await post(`${url}?token=${TOKEN}`, report('U4'))).toEqual(started);
		expect(starts[0][0][0].json.receivedAt).toMatch(/Z$/);
	});

	it('receivedAt is China time with its zone, like the gateway dates beside it', async () => {
		const { url, starts } = await serve({}, { typeVersion: 1.2 });
		const before = Date.now();
		await post(url, report('U5'));
		const json = starts[0][0][0].json;
		expect(json.receivedAt).toMatch(CHINA_TIME);
		expect(String(json.receivedAt).slice(0, 16)).toBe(chinaWallClock(before));
		expect(Date.parse(String(json.receivedAt))).toBeGreaterThanOrEqual(before - 1);
		expect((json.report as IDataObject).sendDateIso).toMatch(/\+08:00$/);
	});

	it('a token that cannot stand in a URL path is refused when the trigger is published or starts listening', async () => {
		const hooks = new DataGatewaySmsTrigger().webhookMethods.default;
		const context = (typeVersion: number, token: string) =>
			({ getNode: () => ({ name: 'SMS Trigger', typeVersion }) as INode, getNodeParameter: () => ({ token }) }) as unknown as IHookFunctions;
		await expect(hooks.create.call(context(1.2, 'a/b?c'))).rejects.toThrow('URL Token may use only letters, digits, - and _');
		await expect(hooks.checkExists.call(context(1.2, 'a b'))).rejects.toThrow(/URL Token/);
		await expect(hooks.create.call(context(1.2, TOKEN))).resolves.toBe(true);
		await expect(hooks.create.call(context(1.1, 'a/b?c'))).resolves.toBe(true);
	});
});

describe('version 1.2: a URL Token given as an expression', () => {
	const EXPRESSION = '={{ "k3y" + "_from_an_expression" }}';

	it("n8n registers the webhook path with the expression's text, not its value", async () => {
		// What 1.2 would register, had the node not refused it (n8n 2.x drops the leading '='; the rest stays).
		const { url } = await serve({ security: { token: EXPRESSION } }, { typeVersion: 1.2 });
		expect(decodeURIComponent(url)).toContain('{{ "k3y" + "_from_an_expression" }}');
		expect(url).not.toContain('k3y_from_an_expression');
	});

	it('is refused with the fix when the workflow is published or the editor starts listening', async () => {
		const trigger = new DataGatewaySmsTrigger();
		for (const mode of ['webhook', 'manual'] as const) {
			await expect(publishWebhook(trigger, { security: { token: EXPRESSION } }, { typeVersion: 1.2, mode })).rejects.toMatchObject({
				message: 'Security > URL Token cannot be an expression',
				description: expect.stringMatching(/Type the token itself/),
			});
		}
		await expect(publishWebhook(trigger, { security: { token: TOKEN } }, { typeVersion: 1.2 })).resolves.toMatch(new RegExp(`/data-gateway-sms/${TOKEN}$`));
		// Before 1.2 the token is compared as ?token=, at each request, so an expression works there.
		await expect(publishWebhook(trigger, { security: { token: EXPRESSION } }, { typeVersion: 1.1 })).resolves.toMatch(/\/data-gateway-sms$/);
	});

	it('the editor offers no expression mode for the 1.2 field', () => {
		const security = new DataGatewaySmsTrigger().description.properties.filter((property) => property.name === 'security');
		const tokens = security.flatMap((property) => (property.options ?? []) as Array<{ name: string; noDataExpression?: boolean; description?: string }>).filter((option) => option.name === 'token');
		expect(tokens.map((option) => option.noDataExpression === true)).toEqual([false, false, true]);
	});
});

describe('while the editor listens, a callback that starts nothing still shows up', () => {
	it('a refused token: the gateway still gets 401, the test run gets an item saying why (without the body)', async () => {
		const { url, starts } = await serve({ security: { token: TOKEN } }, { typeVersion: 1.2, mode: 'manual' });
		expect(url).toContain('/webhook-test/');
		expect(await post(url.replace(TOKEN, 'guess'), report('V1'))).toEqual({ status: 401, body: { error: 'missing or wrong token' } });
		expect(starts).toHaveLength(1);
		const json = starts[0][0][0].json;
		expect(json).toMatchObject({ event: 'notStarted', notStarted: true, httpStatus: 401, reason: 'missing or wrong token', action: 'report', hint: expect.stringMatching(/Security settings/) });
		expect(json.receivedAt).toMatch(CHINA_TIME);
		expect(JSON.stringify(json)).not.toContain('13900000001');
	});

	it('a callback filtered out by the settings: 200 started false for the gateway, an item for the user', async () => {
		const { url, starts } = await serve({ events: ['sign'] }, { typeVersion: 1.2, mode: 'manual' });
		expect(await post(url, report('V2'))).toEqual(notStarted('event not selected'));
		expect(starts[0][0][0].json).toMatchObject({ event: 'notStarted', httpStatus: 200, reason: 'event not selected', hint: expect.stringMatching(/filter it out/) });
	});

	it('on the Production URL nothing changes: a refused or filtered callback starts nothing', async () => {
		const { url, starts } = await serve({ security: { token: TOKEN }, events: ['sign'] }, { typeVersion: 1.2 });
		expect((await post(url.replace(TOKEN, 'guess'), report('V3'))).status).toBe(401);
		expect(await post(url, report('V3'))).toEqual(notStarted('event not selected'));
		expect(starts).toHaveLength(0);
	});
});
