/**
 * The lookup-operation builder: what every single-call lookup (violations, support rules, vehicle
 * detail, registration, telephone) shares, so that an operation file holds only its fields, its
 * request and its output. The jobs that span executions plug in here: Reuse Answers For
 * (lookups/reuse.ts), Only New (lookups/onlyNew.ts) and the telephone quota (lookups/telephoneQuota.ts).
 */
import type { IDisplayOptions, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { BillKind } from '../money/bill';
import { priceOf } from '../money/spend';
import type { QueryValue } from '../transport/gatewayClient';
import { simplifyProperties } from './description';
import { newsOptions } from '../lookups/onlyNew';
import { REUSE_OPTION } from '../lookups/reuse';
import type { LookupDefinition } from './lookupDefinition';
import { runLookup } from './lookupRun';

export { openLookup, type LookupContext, type LookupDefinition } from './lookupDefinition';

/** The field, shown only for the operation (a node with one operation passes no `show`). */
function withShow(field: INodeProperties, show: NonNullable<IDisplayOptions['show']> | undefined): INodeProperties {
	return show ? { ...field, displayOptions: { ...field.displayOptions, show: { ...show, ...field.displayOptions?.show } } } : field;
}

/**
 * An operation file's `description`, `execute` and `bill` from its definition. Paid lookups and the
 * telephone (free, shared across the execution) offer Reuse Answers For; a definition with `news`
 * offers its Only New option and Start Over.
 */
export function lookupOperation<Params extends Record<string, QueryValue>, Answer>(definition: LookupDefinition<Params, Answer>) {
	const { operation, show, simplified, news } = definition;
	const paid = priceOf(operation) > 0;
	const reusable = paid || definition.shareAcrossExecution === true;
	const options: INodeProperties[] = [...(reusable ? [REUSE_OPTION] : []), ...(news ? newsOptions(news) : [])];
	const optionsField: INodeProperties = { displayName: 'Options', name: 'options', type: 'collection', placeholder: 'Add Option', default: {}, options };
	const description: INodeProperties[] = [
		...definition.fields.map((field) => withShow(field, show)),
		...(simplified ? simplifyProperties(show) : []),
		...(options.length > 0 ? [withShow(optionsField, show)] : []),
	];
	const bill: BillKind = operation;

	async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
		return await runLookup(this, definition, { paid, reusable, optionCount: options.length });
	}

	return { description, execute, bill };
}
