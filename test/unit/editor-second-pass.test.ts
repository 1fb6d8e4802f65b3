import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { NodeHelpers, Workflow, type INode, type INodeParameters, type INodeProperties, type INodeType, type INodePropertyOptions } from 'n8n-workflow';

import { DataGatewayApi } from '../../credentials/DataGatewayApi.credentials';
import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { checkPendingDeliveries, getStatus, preview, send, sendAndCheck } from '../../nodes/DataGatewaySms/actions/message';
import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { checkPlate } from '../../nodes/shared/checks/vehicle';
import { PRICES_YUAN } from '../../nodes/shared/gateway/catalog';
import { README_URL } from '../../nodes/shared/n8n/readmeLink';
import { CUSTOM_PREFIX, nodeTypesFor } from '../harness/workflowTypes';

const ROOT = join(__dirname, '..', '..');
const sms = new DataGatewaySms();
const trigger = new DataGatewaySmsTrigger();
const nodes: INodeType[] = [new DataGatewayVehicle(), new DataGatewayEnterprise(), new DataGatewayTelephone(), sms, trigger];


/** The node's subtitle as the canvas shows it for these parameters, resolved by n8n's expression engine. */
function subtitleOf(type: INodeType, parameters: INodeParameters, typeVersion = 1.1): string {
	const node: INode = { id: 'n', name: 'Node', type: CUSTOM_PREFIX + type.description.name, typeVersion, position: [0, 0], parameters };
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes: nodeTypesFor([type]) });
	return String(workflow.expression.getSimpleParameterValue(workflow.getNode('Node')!, type.description.subtitle!, 'manual', {}));
}

const messageOperations = () => (sms.description.properties.find((property) => property.name === 'operation' && JSON.stringify(property.displayOptions).includes('message'))?.options ?? []) as INodePropertyOptions[];

describe('the node creator: the SMS entry is about sending', () => {
	it('both descriptions n8n may show for the SMS entry start with sending', () => {
		expect(sms.description.description).toMatch(/^Send SMS/);
		expect(trigger.description.description).toBe('Send SMS text messages (短信) and start workflows on their delivery reports and on signature and template review results');
		// n8n shows one text for both nodes: "this trigger" would be wrong beside the SMS node.
		expect(trigger.description.description).not.toMatch(/this trigger/i);
	});

	it('the message actions in the order people use them: Send first, Check Pending Deliveries last', () => {
		expect(messageOperations().map((option) => option.action)).toEqual(['Send an SMS', 'Send an SMS and check delivery', 'Preview an SMS without sending', 'Get the status of a message', 'Check pending deliveries']);
		// Each entry is the operation file's own, so its name and action are written once.
		expect(messageOperations()).toEqual([send.option, sendAndCheck.option, preview.option, getStatus.option, checkPendingDeliveries.option]);
		const resources = sms.description.properties.find((property) => property.name === 'resource')?.options as INodePropertyOptions[];
		expect(resources.map((option) => option.value)).toEqual(['message', 'optOut', 'signature', 'template', 'usage']);
	});

	it.each(['sms', 'text message', '短信', 'phone', 'verification code'])('the codex alias "%s" finds the SMS node', (word) => {
		const codex = JSON.parse(readFileSync(join(ROOT, 'nodes/DataGatewaySms/DataGatewaySms.node.json'), 'utf8')) as { alias: string[] };
		expect(codex.alias).toContain(word);
	});
});

describe('the SMS Trigger 1.2 notices (issue 35 item 4)', () => {
	const shown = (security: INodeParameters) =>
		trigger.description.properties
			.filter((property) => property.type === 'notice' && NodeHelpers.displayParameter({ security }, property, { typeVersion: 1.2 } as INode, trigger.description))
			.map((property) => property.displayName);

	it('are three, true with and without a URL Token: one setup paragraph naming the gateway setting, security, missed events; each link names its section (issue 42)', () => {
		const textOf = (notice: string) => notice.replace(/<[^>]+>/g, '').trim();
		const without = shown({});
		const withToken = shown({ token: 'a1b2c3' });
		expect(withToken).toEqual(without);
		expect(without).toHaveLength(3);
		expect(textOf(without[0])).toMatch(/^In the gateway console's SMS settings, set the callback URL \(回调地址\) to the Production URL above, then publish\./);
		// Nothing claims the URL is open, which was stale once a token was set.
		expect(without.join(' ')).not.toMatch(/Without a Security check|any request to this URL is taken/);
		const links = without.map((notice) => /href="[^"#]+#([^"]+)"[^>]*>([^<]+)</.exec(notice)?.slice(1));
		expect(links).toEqual([
			['setup-in-the-gateway-console', 'Setup'],
			['callback-security', 'Security'],
			['delivery-reports-tied-to-their-send', 'Missed events'],
		]);
	});

	it('no field is shown or hidden by a field inside a collection: n8n 1.x cannot resolve that and refuses to activate the workflow', () => {
		for (const node of nodes) {
			for (const property of node.description.properties) {
				const names = [...Object.keys(property.displayOptions?.show ?? {}), ...Object.keys(property.displayOptions?.hide ?? {})];
				expect(names.filter((name) => name.includes('.'))).toEqual([]);
			}
		}
	});
});

describe('the SMS form', () => {
	const properties = sms.description.properties;
	const byName = (name: string) => properties.filter((property) => property.name === name);

	it('ID and phone placeholders read as examples, not as values', () => {
		const placeholders = [...byName('signId'), ...byName('templateId'), ...byName('phone')].map((property) => property.placeholder).filter(Boolean);
		expect(placeholders.length).toBeGreaterThanOrEqual(5);
		for (const placeholder of placeholders) expect(placeholder).toMatch(/^e\.g\. /);
	});

	it('a notice shows each operation\'s price, from the catalog', () => {
		const notice = byName('priceNotice')[0];
		expect(notice.type).toBe('notice');
		expect(notice.displayName).toContain(`Send ${PRICES_YUAN.smsSegment} yuan per segment`);
		expect(notice.displayName).toMatch(/^Prices: Send 0\.035 yuan per segment, all else free\. </);
	});

	it('from version 1.2 Template Variables opens on "From the Template"; 1 and 1.1 keep Key-Value Pairs', () => {
		expect(sms.description.version).toEqual([1, 1.1, 1.2, 1.3, 1.4, 1.5]);
		expect(sms.description.defaultVersion).toBe(1.5);
		const forSend = (property: INodeProperties) => (property.displayOptions?.show?.operation as string[]).includes('send');
		const defaults = byName('variablesInput').filter(forSend).map((property) => [JSON.stringify(property.displayOptions?.show?.['@version']), property.default]);
		expect(defaults).toEqual([
			['[{"_cnd":{"lt":1.2}}]', 'keyValue'],
			['[{"_cnd":{"gte":1.2}}]', 'template'],
		]);
		const mapper = byName('templateVariables')[0] as INodeProperties;
		expect(mapper.type).toBe('resourceMapper');
		expect(mapper.typeOptions?.loadOptionsDependsOn).toEqual(['templateId', 'templateId.value']);
	});

	it("the AI tool notice shows in the tool variant of Send only (n8n's @tool)", () => {
		const notice = properties.find((property) => property.name === 'agentToolNotice') as INodeProperties;
		const node = { id: 'sms', name: 'Send SMS', type: 'dataGatewaySmsTool', typeVersion: 1.4, position: [0, 0] as [number, number], parameters: {} };
		const shown = (operation: string, name: string) => NodeHelpers.displayParameter({ resource: 'message', operation }, notice, node, { ...sms.description, name });
		expect(shown('send', 'dataGatewaySmsTool')).toBe(true);
		expect(shown('sendAndCheck', 'dataGatewaySmsTool')).toBe(true);
		expect(shown('send', 'dataGatewaySms')).toBe(false);
		expect(shown('preview', 'dataGatewaySmsTool')).toBe(false);
	});

	it('Preview has the same fields as Send (switching keeps them), without the sending options and the Reference', () => {
		const shownFor = (operation: string) => properties.filter((property) => (property.displayOptions?.show?.operation as string[] | undefined)?.includes(operation)).map((property) => property.name);
		expect(shownFor('preview')).toEqual(shownFor('send').filter((name) => !['sendOptions', 'agentToolNotice', 'reference'].includes(name)));
	});
});

describe('prices before the first run', () => {
	it('every action node opens with a notice of its operations\' prices, from the catalog', () => {
		const noticeOf = (node: INodeType) => node.description.properties.find((property) => property.name === 'priceNotice')?.displayName ?? '';
		expect(noticeOf(new DataGatewayVehicle())).toMatch(new RegExp(`Query Violations ${PRICES_YUAN.violationQuery} yuan and Get Vehicle Detail ${PRICES_YUAN.vehicleDetail} yuan`));
		expect(noticeOf(new DataGatewayEnterprise())).toMatch(new RegExp(`Get Registration ${PRICES_YUAN.enterpriseDetail} yuan .* copyrights ${PRICES_YUAN.enterpriseCopyright} yuan per page`));
		expect(noticeOf(new DataGatewayTelephone())).toMatch(/Identify is free for 100 calls a day/);
		expect(noticeOf(sms)).toMatch(/^Prices: Send 0\.035 yuan/);
	});
});

describe('the canvas and the docs links', () => {
	it('every subtitle reads "operation: resource" in words', () => {
		expect(subtitleOf(sms, { resource: 'message', operation: 'sendAndCheck' })).toBe('send and check: message');
		expect(subtitleOf(new DataGatewayEnterprise(), { resource: 'copyright', operation: 'getAll' })).toBe('get all: copyright');
		expect(subtitleOf(new DataGatewayVehicle(), { resource: 'vehicle', operation: 'getDetail' })).toBe('get detail: vehicle');
		expect(subtitleOf(new DataGatewayTelephone(), { operation: 'identify' })).toBe('identify: phone number');
		expect(subtitleOf(trigger, { events: ['report', 'sign'] }, 1.2)).toBe('delivery report, signature review');
	});

	it("each node links its documentation section itself, so n8n's ?utm… cannot land after the #section", () => {
		// That the heading exists on the page is test/unit/docLinks.test.ts's check.
		for (const node of nodes) expect(node.description.documentationUrl).toMatch(new RegExp(`^${README_URL}/blob/main/docs/nodes\\.md#data-gateway-[a-z-]+$`));
	});

	it('the plate error lists the accepted forms by example', () => {
		const problem = checkPlate('京A123').value;
		expect(problem).toBe('"京A123" is not a plate number. Accepted: 京A12345 (province character, letter, 5 letters or digits), 粤BD12345 (new-energy: 6), 京A1234学 (4 letters or digits, then 学, 警, 挂, 港, 澳, 领 or 试), 使123456 (embassy)');
		for (const example of ['京A12345', '粤BD12345', '京A1234学', '使123456']) expect(checkPlate(example).ok).toBe(true);
	});

	it("the credential's shared Redis says plainly that queue mode's Redis will do", () => {
		const description = new DataGatewayApi().properties.find((property) => property.name === 'sharedLimitRedisUrl')?.description;
		expect(description).toMatch(/^A Redis every n8n process reaches \(in queue mode, the Redis n8n already uses for its queue will do\)/);
	});

	it('the credential reads in four sections, each a one-line heading; the budgets say they are the account\'s, across processes, and where they are kept', () => {
		const properties = new DataGatewayApi().properties;
		const headings = properties.filter((property) => property.type === 'notice').map((property) => property.displayName.replace(/<[^>]+>/g, ''));
		expect(headings.map((text) => text.split(':')[0])).toEqual(['Connection', 'Money', 'Telephone plan', 'Shared Redis (optional)']);
		for (const text of headings) expect(text.length).toBeLessThanOrEqual(160);
		const order = properties.map((property) => property.name);
		expect(order.indexOf('moneySection')).toBe(order.indexOf('maxSpendPerExecution') - 1);
		expect(order.indexOf('telephoneSection')).toBe(order.indexOf('telephonePlan') - 1);
		expect(order.indexOf('redisSection')).toBe(order.indexOf('sharedLimitRedisUrl') - 1);
		for (const name of ['dailyBudgetYuan', 'monthlyBudgetYuan']) {
			expect(properties.find((property) => property.name === name)?.hint).toMatch(/^This account's spend in all n8n processes, kept in the shared store \(Redis, else n8n's SQLite file\)/);
		}
		expect(headings[3]).toMatch(/Without it, limits are per process; budgets, send records and opt-outs still hold\./);
	});
});
