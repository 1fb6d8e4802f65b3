import { NodeOperationError, type IDataObject, type IExecuteFunctions, type INodeExecutionData, type INodeProperties, type INodePropertyOptions } from 'n8n-workflow';

import { checkMobileNumber } from '../../../shared/checks/phone';
import { inputError } from '../../../shared/errors/failures';
import { chinaIso } from '../../../shared/lookups/chinaTime';
import { runForEachItem } from '../../../shared/n8n/batch';
import type { DurableStore } from '../../../shared/store/durableStore';
import { hintStoreFallback, openDurableStore } from '../../../shared/store/openStore';
import { openGuardScope } from '../../../shared/store/guardScope';
import { changeOptOuts, readOptOuts } from '../../../shared/store/optOutList';
import { gatewayClient } from '../../../shared/transport/clientForNode';
import { phoneNumberField } from '../phoneField';

/**
 * The opt-out list's operations (Add, Remove, Check): free, no gateway call. Every item's number is
 * read and checked first, then one store change (or read) serves the whole run. The list belongs to
 * the credential's account, so every workflow with that credential shares it (store/optOutList.ts).
 */
export type OptOutOperation = 'add' | 'remove' | 'check';

const OPTIONS: Record<OptOutOperation, INodePropertyOptions> = {
	add: { name: 'Add', value: 'add', description: "Add each item's number to the account's opt-out list: no Send texts it until removed (free)", action: 'Add a number to the opt-out list' },
	check: { name: 'Check', value: 'check', description: "Check whether each item's number is on the account's opt-out list (free)", action: 'Check a number against the opt-out list' },
	remove: { name: 'Remove', value: 'remove', description: "Remove each item's number from the account's opt-out list, so Send texts it again (free)", action: 'Remove a number from the opt-out list' },
};

/** The one field of every opt-out operation. */
export const optOutPhoneProperty: INodeProperties = phoneNumberField(
	'A mainland mobile number. Spaces, dashes and a +86 prefix are removed, as Send removes them, so each number is one entry whatever its form.',
	{ resource: ['optOut'] },
);

/** The Operation dropdown of the Opt-Out resource. */
export const optOutOperationProperty: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['optOut'] } },
	options: [OPTIONS.add, OPTIONS.check, OPTIONS.remove],
	default: 'add',
};

/** Whether the number was on the list before this run: when it was added, else undefined. */
type Listed = number | undefined;

function present(operation: OptOutOperation, phone: string, listed: Listed): IDataObject {
	const since = listed === undefined ? {} : { optedOutAt: chinaIso(listed) };
	if (operation === 'add') return { phone, optedOut: true, alreadyListed: listed !== undefined, ...since };
	if (operation === 'remove') return { phone, optedOut: false, removed: listed !== undefined };
	return { phone, optedOut: listed !== undefined, ...since };
}

function readPhone(ctx: IExecuteFunctions, itemIndex: number): string {
	const phone = checkMobileNumber(ctx.getNodeParameter('phone', itemIndex, '') as string);
	if (!phone.ok) throw inputError(ctx.getNode(), itemIndex, 'Phone Number', phone.value, 'Enter a mainland mobile number like 13800138000.');
	return phone.value;
}

/** The store's failure as the node's: nothing was changed, or (Check) nothing can be said. */
function listUnavailable(ctx: IExecuteFunctions, store: DurableStore, operation: OptOutOperation, error: unknown): NodeOperationError {
	const reason = error instanceof Error ? error.message : String(error);
	const what = operation === 'check' ? 'The opt-out list could not be read' : 'The opt-out list was not changed';
	const message = reason.includes(store.label) ? `${what}: ${reason}` : `${what}: ${store.label} could not be used: ${reason}`;
	const nodeError = new NodeOperationError(ctx.getNode(), message, { description: 'Fix the store named, then run again: the list is kept only where it cannot vanish.' });
	nodeError.message = message;
	return nodeError;
}

/** The operation's execute. */
export function optOutOperation(operation: OptOutOperation) {
	async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
		const account = (await gatewayClient(this)).guard;
		const store = await openDurableStore(this);
		hintStoreFallback(this, store);
		const before = new Map<string, number>();
		return await runForEachItem<string, Listed>(this, {
			concurrency: 1,
			plan: (itemIndex) => readPhone(this, itemIndex),
			beforeCalls: async (plans) => {
				const phones = [...plans.values()];
				const change = async () => {
					const guard = await openGuardScope(store, account, 'list');
					return await (operation === 'check' ? readOptOuts(guard, phones) : changeOptOuts(guard, phones, operation));
				};
				const listed = await change().catch((error: unknown) => Promise.reject(listUnavailable(this, store, operation, error)));
				for (const [phone, at] of listed) before.set(phone, at);
			},
			execute: async (phone) => before.get(phone),
			output: (listed, phone) => present(operation, phone, listed),
		});
	}
	return { execute };
}
