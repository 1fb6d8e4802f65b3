import { NodeConnectionTypes, type INodeProperties } from 'n8n-workflow';

import { CREDENTIAL_TEST_METHOD, testGatewayCredential } from './client';

/** One main input and one main output, as every action node has. */
export const mainConnection = [NodeConnectionTypes.Main];

/** Nodes list the credential inline (n8n's linter reads `testedBy` there); this is what it names. */
export const gatewayMethods = {
	credentialTest: { [CREDENTIAL_TEST_METHOD]: testGatewayCredential },
};

export const simplifyProperty: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: false,
	description:
		'Whether to smooth the gateway\'s oddities: flatten nesting, turn "-" into null, counts into numbers, and add ISO timestamps beside the originals',
};
