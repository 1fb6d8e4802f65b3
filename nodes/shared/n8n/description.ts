import {
	NodeConnectionTypes,
	type IDisplayOptions,
	type INode,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	type INodePropertyOptions,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { CREDENTIAL_TEST_METHOD, testGatewayCredential } from '../transport/clientForNode';

/** One main input and one main output, as every action node has. */
const mainConnection = [NodeConnectionTypes.Main];

/** Nodes list the credential inline (n8n's linter reads `testedBy` there); this is what it names. */
export const gatewayMethods = {
	credentialTest: { [CREDENTIAL_TEST_METHOD]: testGatewayCredential },
};

/**
 * Node versions: 1.1 turns Simplify on for new nodes and gives simplified output self-explaining
 * camelCase names; workflows saved with 1 keep their output exactly.
 */
export const NODE_VERSIONS = [1, 1.1];
export const LATEST_NODE_VERSION = 1.1;

/**
 * Version 1.2, of four nodes; workflows saved with 1.1 keep their output and form. Enterprise:
 * copyright records carry one cost column (`costYuan`) that adds up to the bill. Telephone: the
 * simplified record keeps the number as given (`phoneAsGiven`) beside the normalised `phone`. SMS:
 * Template Variables opens on "From the Template". SMS Trigger: the URL Token is part of the
 * webhook path, and `receivedAt` is China time. Vehicle: error items keep the input (see
 * ERROR_ITEMS_KEEP_INPUT_FROM).
 */
export const NODE_VERSIONS_TO_1_2 = [1, 1.1, 1.2];
export const NODE_VERSION_1_2 = 1.2;

/** Version 1.3 of the SMS, Enterprise and Telephone nodes: error items keep the input (see below). */
export const NODE_VERSIONS_TO_1_3 = [1, 1.1, 1.2, 1.3];

/**
 * Version 1.4 of the SMS, Enterprise and Telephone nodes, 1.3 of Vehicle: error-branch items say
 * the error in `message` (see ERROR_ITEMS_MESSAGE_FIRST_FROM). Enterprise 1.4 also puts each copyright
 * page's cost once, on its first record.
 */
export const NODE_VERSIONS_TO_1_4 = [...NODE_VERSIONS_TO_1_3, 1.4];

/**
 * Version 1.5 of the SMS node: an opted-out number, or a message its Send Window closed on, is an
 * item with `sent: false` and why, and the gateway's forbidden content is refused by default
 * (send/leaving.ts); Import to Catalogue sums up the IDs not found as ranges ("1-50")
 * instead of one entry each, and Send Window refuses nothing until "Outside These Hours" is set to
 * refuse (adding the option no longer applies 08:00-21:00 at once), and Reference is one of Send's
 * options (`sendOptions.reference`), so the default form fits without scrolling. Saved nodes keep theirs.
 */
export const NODE_VERSIONS_TO_1_5 = [...NODE_VERSIONS_TO_1_4, 1.5];
export const SMS_VERSION_1_5 = 1.5;

/**
 * The first version of each action node whose failed items, under "Continue (using error output)",
 * carry the item's input (phone, plate, keyword, task ID) on the error branch. Older versions keep
 * their error items as saved workflows know them. Vehicle had no 1.2, so its 1.2 is this change.
 */
const ERROR_ITEMS_KEEP_INPUT_FROM: Record<string, number> = {
	dataGatewaySms: 1.3,
	dataGatewayEnterprise: 1.3,
	dataGatewayTelephone: 1.3,
	dataGatewayVehicle: 1.2,
};

/**
 * The first version of each action node whose error-branch items follow n8n's convention:
 * `message` is the error (as on n8n's own nodes), the fix goes to `details`, and `error` repeats
 * the error (n8n routes an item to the error output by it). Earlier versions put the fix in
 * `message`, as saved workflows know them.
 */
const ERROR_ITEMS_MESSAGE_FIRST_FROM: Record<string, number> = {
	dataGatewaySms: 1.4,
	dataGatewayEnterprise: 1.4,
	dataGatewayTelephone: 1.4,
	dataGatewayVehicle: 1.3,
};

const nodeNameOf = (node: INode) => node.type.slice(node.type.lastIndexOf('.') + 1).replace(/Tool$/, '');

/** Whether this node's error-branch items say the error in `message` and the fix in `details`. */
export function errorItemsMessageFirst(node: INode): boolean {
	const from = ERROR_ITEMS_MESSAGE_FIRST_FROM[nodeNameOf(node)];
	return errorItemsKeepInput(node) && from !== undefined && node.typeVersion >= from;
}

/** Whether this node's failed items leave on the error output with the item's input beneath the error. */
export function errorItemsKeepInput(node: INode): boolean {
	if (node.onError !== 'continueErrorOutput') return false;
	// The type is `<package>.<name>` (or `CUSTOM.<name>`); n8n's AI-tool variant adds `Tool`.
	const name = nodeNameOf(node);
	const from = ERROR_ITEMS_KEEP_INPUT_FROM[name];
	return from !== undefined && node.typeVersion >= from;
}

/**
 * Every action node's subtitle reads "operation: resource" in words, e.g. "send and check: message".
 * Each node file names it as its `subtitle`: n8n's linter wants the key written out there.
 */
export const OPERATION_SUBTITLE = '={{ ($parameter["operation"] + ": " + $parameter["resource"]).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase() }}';

/**
 * What every node of the package has in common: its versions and, for action nodes, one main input
 * and output. Each node file spreads this and adds its own name, texts and properties; the icon,
 * `usableAsTool`, the credential and the subtitle stay written out there because n8n's linter reads
 * them from the node file.
 * `versions`: NODE_VERSIONS_TO_1_4 for the Enterprise, Telephone and SMS nodes, 1 to 1.3 for Vehicle, NODE_VERSIONS_TO_1_2 for the SMS Trigger; new nodes get the newest.
 */
export function nodeSkeleton(kind: 'action' | 'trigger', versions: number[] = NODE_VERSIONS): Pick<INodeTypeDescription, 'version' | 'defaultVersion' | 'inputs' | 'outputs'> {
	return { version: versions, defaultVersion: Math.max(...versions), inputs: kind === 'trigger' ? [] : mainConnection, outputs: mainConnection };
}

/** An action node's execute: the operation picked in the node's dropdowns, run by its router (actions/router.ts). */
export function executeByRouter(router: (this: IExecuteFunctions) => Promise<INodeExecutionData[][]>) {
	return async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	};
}

/** The Resource dropdown of a node with several resources; the first one is the default. */
export function resourceProperty(resources: [INodePropertyOptions, ...INodePropertyOptions[]]): INodeProperties {
	const firstResource = resources[0].value;
	return { displayName: 'Resource', name: 'resource', type: 'options', noDataExpression: true, options: resources, default: firstResource };
}

/** Whether the node was saved with version 1.1 or later (friendly names, Simplify on by default). */
export function usesFriendlyNames(ctx: IExecuteFunctions): boolean {
	return ctx.getNode().typeVersion >= 1.1;
}

/** Shows a property only in version 1, or only from version 1.1 on. */
export function forVersion(version: 1 | 1.1, displayOptions: IDisplayOptions = {}): IDisplayOptions {
	return { ...displayOptions, show: { ...displayOptions.show, '@version': version === 1 ? [1] : [{ _cnd: { gte: 1.1 } }] } };
}

/** Version 1's Simplify: off by default, the gateway's own names with smoothed values. */
export const simplifyProperty: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: false,
	description:
		'Whether to smooth the gateway\'s oddities: flatten nesting, turn "-" into null, counts into numbers, and add ISO timestamps beside the originals',
};

/** Simplify in both versions; `show` limits it to an operation. */
export function simplifyProperties(show: NonNullable<IDisplayOptions['show']> = {}): INodeProperties[] {
	return [
		{ ...simplifyProperty, displayOptions: forVersion(1, { show }) },
		{
			...simplifyProperty,
			default: true,
			description:
				'Whether to return a clean record with self-explaining names, numbers as numbers, ISO dates and plain text. Off: exactly what the gateway answered.',
			displayOptions: forVersion(1.1, { show }),
		},
	];
}
