/**
 * Issue 33 item 13: under "Continue (regular output)" a failed item's output names its input item
 * (pairedItem) even when the node's output count differs from its input count. n8n-core fills in
 * pairedItem only when the counts match (or there is one input item), so these runs, through the
 * real engine, make them differ: an item with several records, or an item with nothing new.
 */
import type { IDataObject, INodeExecutionData, INodeParameters, INodeType } from 'n8n-workflow';

import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';
import type { Emulator } from '../emulator/server';
import { useEmulator } from '../harness/emulator';
import { runWorkflow } from '../harness/workflow';

let emulator: Emulator;
useEmulator((started) => (emulator = started));

const enterprise = new DataGatewayEnterprise();
const vehicle = new DataGatewayVehicle();

function run(type: INodeType, parameters: INodeParameters, items: IDataObject[], typeVersion?: number) {
	return runWorkflow({
		steps: [{ name: 'Lookup', type, parameters, typeVersion, settings: { continueOnFail: true } }],
		items,
		credentials: { dataGatewayApi: { appCodeSecret: emulator.demo.memberAppCode, baseUrl: emulator.url } },
	});
}

/** Each output item as [input index it names, error text or undefined]. */
const pairing = (items: INodeExecutionData[]) => items.map((item) => [(item.pairedItem as { item?: number } | undefined)?.item, item.json.error]);

describe('Continue (regular output): a failed item names its input when items yield several outputs', () => {
	const listing = { resource: 'copyright', operation: 'getAll', keyword: '={{ $json.keyword }}', returnAll: false, limit: 3 };
	// Item 2 is refused before any call, item 3 by the gateway; items 1 and 4 yield 3 records each.
	const keywords = [{ keyword: 'many works 甲' }, { keyword: '' }, { keyword: '404 无此公司' }, { keyword: 'many works 乙' }];
	const expected = [
		[0, undefined],
		[0, undefined],
		[0, undefined],
		[1, expect.stringMatching(/^Item 2: Keyword is empty/)],
		[2, expect.stringMatching(/no enterprise matches the keyword/)],
		[3, undefined],
		[3, undefined],
		[3, undefined],
	];

	it.each([
		['the newest version', undefined],
		['version 1, as saved workflows have it', 1],
	])('Copyright Get Many, %s: 4 inputs, 8 outputs, each failed item paired with its own input', async (_label, typeVersion) => {
		const result = await run(enterprise, listing, keywords, typeVersion);
		expect(result.error).toBeUndefined();
		expect(pairing(result.items())).toEqual(expected);
	});

	it('Violation Query with Only New: the unchanged plates output nothing, the refused plate its error, paired', async () => {
		const query = { resource: 'violation', operation: 'query', carNumber: '={{ $json.plate }}', options: { onlyNewViolations: true } };
		const plates = [{ plate: '京A41001' }, { plate: 'not a plate' }, { plate: '沪B41003' }];
		const first = await run(vehicle, query, plates);
		expect(pairing(first.items()).map(([item]) => item)).toEqual([0, 1, 2]);
		// Nothing new for the two good plates: 1 output for 3 inputs.
		const second = await run(vehicle, query, plates);
		expect(pairing(second.items())).toEqual([[1, expect.stringMatching(/^Item 2: Plate Number/)]]);
	});
});
