import './n8nEnv';

import {
	ICredentialsHelper,
	NodeHelpers,
	type ICredentialDataDecryptedObject,
	type ICredentials,
	type IDataObject,
	type IExecuteFunctions,
	type IHttpRequestOptions,
	type INodeExecutionData,
	type INodeProperties,
	type INodeType,
	type INodeTypes,
	type IVersionedNodeType,
} from 'n8n-workflow';

/** A tiny source node that emits the test's input items, so pairedItem links to a real parent. */
class InputItemsNode implements INodeType {
	description = {
		displayName: 'Input Items',
		name: 'harnessInputItems',
		group: ['input'],
		version: 1,
		description: 'Emits the items given in its parameter',
		defaults: { name: 'Input' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [{ displayName: 'Items', name: 'items', type: 'json', default: '[]' }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = JSON.parse(this.getNodeParameter('items', 0) as string) as IDataObject[];
		return [items.map((json) => ({ json }))];
	}
}

/**
 * A loop like n8n's Loop Over Items: output 0 "done" gets every item that came back, output 1
 * "loop" gets the next batch; each batch is a new run of the nodes inside the loop.
 */
class LoopNode implements INodeType {
	description = {
		displayName: 'Loop',
		name: 'harnessLoop',
		group: ['transform'],
		version: 1,
		description: 'Emits its input in batches, one run each',
		defaults: { name: 'Loop' },
		inputs: ['main'],
		outputs: ['main', 'main'],
		outputNames: ['done', 'loop'],
		properties: [{ displayName: 'Batch Size', name: 'batchSize', type: 'number', default: 1 }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const context = this.getContext('node') as { waiting?: INodeExecutionData[]; done?: INodeExecutionData[] };
		const batchSize = this.getNodeParameter('batchSize', 0) as number;
		if (context.waiting === undefined) {
			context.waiting = this.getInputData().map((item) => ({ json: item.json }));
			context.done = [];
		} else {
			context.done!.push(...this.getInputData().map((item) => ({ json: item.json })));
		}
		if (context.waiting.length === 0) {
			const done = context.done!;
			delete context.waiting;
			return [done, []];
		}
		return [[], context.waiting.splice(0, batchSize)];
	}
}

export const INPUT_NODE_TYPE = 'harness.inputItems';
export const LOOP_NODE_TYPE = 'harness.loop';
export const CUSTOM_PREFIX = 'CUSTOM.';

/** Hands every node the credentials the test gave, by type, as n8n would after decrypting them. */
export class StaticCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly credentials: Record<string, ICredentialDataDecryptedObject>) {
		super();
	}
	getParentTypes(): string[] {
		return [];
	}
	isCredentialUsableByNode(): boolean {
		return true;
	}
	async authenticate(_credentials: ICredentialDataDecryptedObject, _type: string, options: IHttpRequestOptions) {
		return options;
	}
	async preAuthentication() {
		return undefined;
	}
	async runPreAuthentication() {
		return undefined;
	}
	async getCredentials(): Promise<ICredentials> {
		throw new Error('not needed by these tests');
	}
	async getDecrypted(_additionalData: unknown, _nodeCredentials: unknown, type: string) {
		const data = this.credentials[type];
		if (!data) throw new Error(`The test gave no credentials of type ${type}`);
		return data;
	}
	async updateCredentials() {}
	async updateCredentialsOauthTokenData() {}
	getCredentialsProperties(): INodeProperties[] {
		return [];
	}
}

/** The harness nodes and the package nodes under test, by the type names a workflow uses. */
export function nodeTypesFor(types: INodeType[]): INodeTypes {
	const byName = new Map<string, INodeType | IVersionedNodeType>([
		[INPUT_NODE_TYPE, new InputItemsNode()],
		[LOOP_NODE_TYPE, new LoopNode()],
	]);
	for (const type of types) byName.set(CUSTOM_PREFIX + type.description.name, type);
	return {
		getByName: (name) => {
			const type = byName.get(name);
			if (!type) throw new Error(`Unknown node type ${name}`);
			return type;
		},
		getByNameAndVersion: (name, version) => {
			const type = byName.get(name);
			if (!type) throw new Error(`Unknown node type ${name}`);
			return NodeHelpers.getVersionedNodeType(type, version);
		},
		getKnownTypes: () => ({}),
	};
}
