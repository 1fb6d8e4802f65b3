import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { INodeProperties, INodeType } from 'n8n-workflow';

import { DataGatewayApi } from '../../credentials/DataGatewayApi.credentials';
import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import { README_URL } from '../../nodes/shared/n8n/readmeLink';

const ROOT = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { homepage: string; repository: { url: string } };
const nodes: INodeType[] = [new DataGatewayVehicle(), new DataGatewayEnterprise(), new DataGatewayTelephone(), new DataGatewaySms(), new DataGatewaySmsTrigger()];
const actionNodes = nodes.filter((node) => node.description.group[0] !== 'trigger');

/** Every property at any depth (collections, fixed collections). */
function allProperties(properties: INodeProperties[]): INodeProperties[] {
	return properties.flatMap((property) => [
		property,
		...allProperties(((property.options ?? []) as Array<INodeProperties | { values?: INodeProperties[] }>).flatMap((option) => ('values' in option && option.values ? option.values : 'type' in option ? [option as INodeProperties] : []))),
	]);
}

/** Words a reader reads: links and tags left out of the count, their text kept. */
const wordsOf = (text: string) => text.replace(/<[^>]+>/g, ' ').split(/\s+/).filter(Boolean).length;

describe('descriptions a user reads without the docs (issue 42)', () => {
	it('no description of any field or option, at any depth, of the five nodes or the credential is over 40 words', () => {
		const lists: Array<[string, INodeProperties[]]> = [['credential', new DataGatewayApi().properties], ...nodes.map((node): [string, INodeProperties[]] => [node.description.name, node.description.properties])];
		const long = lists.flatMap(([owner, properties]) => allProperties(properties).filter((property) => wordsOf(property.description ?? '') > 40).map((property) => `${owner}.${property.name}: ${wordsOf(property.description ?? '')} words`));
		expect(long).toEqual([]);
	});

	it("Send's options: about 25 words each, grouped by purpose in the order limits, window, content, records, with no version history", () => {
		const options = (new DataGatewaySms().description.properties.find((property) => property.name === 'sendOptions')?.options ?? []) as INodeProperties[];
		for (const option of options) {
			expect(wordsOf(option.description ?? '')).toBeLessThanOrEqual(30);
			expect(option.description).not.toMatch(/before version|saved before|version 1\.[0-4]/);
		}
		expect(options.map((option) => option.displayName.split(':')[0])).toEqual(['Limit', 'Limit', 'Limit', 'Window', 'Window', 'Content', 'Content', 'Content', 'Content', 'Records', 'Records']);
	});
});

describe('what the editor shows', () => {
	it('the repository the nodes link to is package.json\'s homepage and repository', () => {
		expect(pkg.homepage.replace(/#.*$/, '')).toBe(README_URL);
		expect(pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')).toBe(README_URL);
		const codexUrls = readdirSync(join(ROOT, 'nodes'))
			.filter((folder) => folder.startsWith('DataGateway'))
			.map((folder) => JSON.parse(readFileSync(join(ROOT, 'nodes', folder, `${folder}.node.json`), 'utf8')).resources.primaryDocumentation[0].url as string);
		expect(codexUrls).toHaveLength(5);
		for (const url of [...codexUrls, new DataGatewayApi().documentationUrl]) expect(url).toMatch(new RegExp(`^${README_URL}#[a-z-]+$`));
	});

	it('notices are at most two short lines and link to the documentation', () => {
		const notices = nodes.flatMap((node) => node.description.properties.filter((property) => property.type === 'notice'));
		expect(notices.length).toBeGreaterThanOrEqual(3);
		for (const notice of notices) {
			const text = notice.displayName.replace(/<[^>]+>/g, '');
			expect(text.length).toBeLessThanOrEqual(160);
			expect(notice.displayName).toContain(`href="${README_URL}`);
			expect(notice.displayName).not.toMatch(/Listen for test event|queue-mode|static data/);
		}
	});

	it('every action node has versions 1 to 1.3 (Enterprise and Telephone also 1.4, SMS 1.4 and 1.5), new nodes get the newest, and each lists its actions in the node creator', () => {
		for (const node of actionNodes) {
			const name = node.description.name;
			const upTo14 = ['dataGatewayEnterprise', 'dataGatewayTelephone'].includes(name) ? [1, 1.1, 1.2, 1.3, 1.4] : [1, 1.1, 1.2, 1.3];
			const versions = name === 'dataGatewaySms' ? [1, 1.1, 1.2, 1.3, 1.4, 1.5] : upTo14;
			const newest = versions[versions.length - 1];
			expect(node.description.version).toEqual(versions);
			expect(node.description.defaultVersion).toBe(newest);
			const operations = node.description.properties.filter((property) => property.name === 'operation');
			const actions = operations.flatMap((property) => (property.options ?? []).map((option) => (option as { action?: string }).action));
			expect(actions.length).toBeGreaterThan(0);
			expect(actions.every((action) => typeof action === 'string' && action.length > 0)).toBe(true);
		}
	});

	it('the SMS nodes carry the words people search for', () => {
		const sms = new DataGatewaySms().description;
		expect(sms.description).toMatch(/SMS/);
		expect(sms.description).toMatch(/text message/);
		expect(sms.description).toMatch(/短信/);
		const codex = JSON.parse(readFileSync(join(ROOT, 'nodes/DataGatewaySms/DataGatewaySms.node.json'), 'utf8')) as { alias: string[] };
		expect(codex.alias).toEqual(expect.arrayContaining(['sms', 'text message', '短信']));
	});

	it('Signature ID and Template ID: number fields in version 1, required text fields with a hint in 1.1 to 1.3, pickers by name from 1.4', () => {
		// Send's fields (Preview shows the same ones).
		const forSend = (property: INodeProperties) => ((property.displayOptions?.show?.operation ?? []) as string[]).includes('send');
		const fields = allProperties(new DataGatewaySms().description.properties).filter((property) => (property.name === 'signId' || property.name === 'templateId') && forSend(property));
		const versions = (field: INodeProperties) => JSON.stringify(field.displayOptions?.show?.['@version']);
		const v11 = fields.filter((field) => versions(field) === '[1.1,1.2,1.3]');
		expect(v11.map((field) => field.name)).toEqual(['signId', 'templateId']);
		for (const field of v11) expect(field).toMatchObject({ type: 'string', default: '', required: true, hint: expect.stringMatching(/gateway console, or with (Signature|Template) → Get/) });
		const pickers = fields.filter((field) => versions(field) === '[{"_cnd":{"gte":1.4}}]');
		expect(pickers.map((field) => [field.name, field.displayName])).toEqual([
			['signId', 'Signature'],
			['templateId', 'Template'],
		]);
		for (const field of pickers) {
			expect(field).toMatchObject({ type: 'resourceLocator', required: true, default: { mode: 'list', value: '' } });
			expect(field.modes?.map((mode) => [mode.name, mode.type, mode.typeOptions?.searchListMethod])).toEqual([
				['list', 'list', field.name === 'signId' ? 'searchSignatures' : 'searchTemplates'],
				['id', 'string', undefined],
			]);
		}
		for (const field of fields.filter((candidate) => !v11.includes(candidate) && !pickers.includes(candidate))) expect(field).toMatchObject({ type: 'number', default: 0 });
	});

	it('credential fields have one-line descriptions; 0 is explained in the field hint', () => {
		const properties = new DataGatewayApi().properties;
		// The section headings are notices, without descriptions.
		for (const property of properties.filter((candidate) => candidate.name !== 'sharedLimitRedisUrl' && candidate.type !== 'notice')) {
			expect(property.description).toBeTruthy();
			expect(String(property.description).length).toBeLessThanOrEqual(130);
		}
		expect(properties.find((property) => property.name === 'maxPerSecond')?.hint).toBe('0 = adapt to the gateway: slow down when it answers 429');
		expect(properties.find((property) => property.name === 'maxSpendPerExecution')?.hint).toMatch(/0 = no cap\.$/);
		expect(properties.find((property) => property.name === 'dailyBudgetYuan')?.hint).toMatch(/resets 00:00 China time\. 0 = none\.$/);
		expect(properties.find((property) => property.name === 'monthlyBudgetYuan')?.hint).toMatch(/resets on the 1st\. 0 = none\.$/);
	});

	it('every example explains itself in a sticky note (issue 35 item 5)', () => {
		const files = readdirSync(join(ROOT, 'examples')).filter((file) => file.endsWith('.json'));
		expect(files.length).toBeGreaterThanOrEqual(10);
		for (const file of files) {
			const example = JSON.parse(readFileSync(join(ROOT, 'examples', file), 'utf8')) as { nodes: Array<{ type: string; parameters: { content?: string } }> };
			const notes = example.nodes.filter((node) => node.type === 'n8n-nodes-base.stickyNote');
			expect({ file, hasNote: notes.some((note) => (note.parameters.content ?? '').trim().length > 40) }).toEqual({ file, hasNote: true });
		}
	});

	it('the trigger examples set a URL token', () => {
		for (const file of ['delivery-reports.json', 'review-notifications.json']) {
			const example = JSON.parse(readFileSync(join(ROOT, 'examples', file), 'utf8')) as { nodes: Array<{ type: string; parameters: { security?: { token?: string } } }> };
			const trigger = example.nodes.find((node) => node.type.endsWith('dataGatewaySmsTrigger'));
			expect(trigger?.parameters.security?.token).toMatch(/\S{16,}/);
		}
	});
});
