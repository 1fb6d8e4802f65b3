/**
 * The five nodes' descriptions and the credential's, as n8n reads them (every version of a
 * versioned node), held against a snapshot: a form, a default or an output promise changes only on
 * purpose (a saved workflow keeps its version, so a change of defaults needs a new one).
 */
import type { INodeType, INodeTypeDescription, IVersionedNodeType } from 'n8n-workflow';

import { DataGatewayApi } from '../../credentials/DataGatewayApi.credentials';
import { DataGatewayEnterprise } from '../../nodes/DataGatewayEnterprise/DataGatewayEnterprise.node';
import { DataGatewaySms } from '../../nodes/DataGatewaySms/DataGatewaySms.node';
import { DataGatewaySmsTrigger } from '../../nodes/DataGatewaySmsTrigger/DataGatewaySmsTrigger.node';
import { DataGatewayTelephone } from '../../nodes/DataGatewayTelephone/DataGatewayTelephone.node';
import { DataGatewayVehicle } from '../../nodes/DataGatewayVehicle/DataGatewayVehicle.node';

function descriptionsOf(node: INodeType | IVersionedNodeType): INodeTypeDescription[] {
	if ('nodeVersions' in node) return Object.values(node.nodeVersions).map((version) => version.description);
	return [node.description];
}

/** Functions (none expected) would not survive JSON: the snapshot holds what n8n's editor receives. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('node descriptions', () => {
	it.each([
		['vehicle', DataGatewayVehicle],
		['enterprise', DataGatewayEnterprise],
		['telephone', DataGatewayTelephone],
		['sms', DataGatewaySms],
		['sms trigger', DataGatewaySmsTrigger],
	] as Array<[string, new () => INodeType | IVersionedNodeType]>)('%s: as n8n reads them', (_name, NodeClass) => {
		expect(asJson(descriptionsOf(new NodeClass()))).toMatchSnapshot();
	});

	it('the credential type', () => {
		const credential = new DataGatewayApi();
		expect(asJson({ name: credential.name, displayName: credential.displayName, properties: credential.properties, documentationUrl: credential.documentationUrl })).toMatchSnapshot();
	});
});
