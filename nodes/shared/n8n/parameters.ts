import type { IExecuteFunctions, INode, NodeOperationError } from 'n8n-workflow';

import { inputError } from '../errors/failures';

function containsExpression(raw: unknown): boolean {
	if (typeof raw === 'string') return raw.startsWith('=');
	if (raw !== null && typeof raw === 'object') return Object.values(raw).some(containsExpression);
	return false;
}

/** The parameter as saved, also under a dotted path ('variables.variable'), as getNodeParameter finds it. */
function rawValue(parameters: unknown, name: string): unknown {
	let value = parameters;
	for (const part of name.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
	return value;
}

/**
 * Node parameters read for many items. n8n resolves every read through its expression engine and
 * validation; a parameter without an expression has the same value for every item, so it is read
 * once, and one with an expression once per item (its check and its value as given read it twice).
 * Values are shared: treat them as read-only.
 */
export class ItemParameters {
	private readonly fixed = new Map<string, unknown>();
	private readonly perItem = new Set<string>();
	/** The values of expressions for the item read last (items are planned one after another). */
	private heldItem = -1;
	private readonly held = new Map<string, { fallback: unknown; value: unknown }>();

	constructor(private readonly ctx: IExecuteFunctions) {}

	get<T>(name: string, itemIndex: number, fallback: T): T {
		if (this.fixed.has(name)) return this.fixed.get(name) as T;
		if (itemIndex !== this.heldItem) {
			this.held.clear();
			this.heldItem = itemIndex;
		}
		const held = this.held.get(name);
		if (held !== undefined && held.fallback === fallback) return held.value as T;
		const value = this.ctx.getNodeParameter(name, itemIndex, fallback) as T;
		if (this.perItem.has(name)) this.held.set(name, { fallback, value });
		else if (containsExpression(rawValue(this.ctx.getNode().parameters, name))) {
			this.perItem.add(name);
			this.held.set(name, { fallback, value });
		} else this.fixed.set(name, value);
		return value;
	}
}

/**
 * One item's fields, as an operation's request reads them: `read` through ItemParameters, and
 * `fail`, the input error that names the item and the field, made before anything is paid.
 */
export class ItemInput {
	constructor(
		private readonly parameters: ItemParameters,
		private readonly node: INode,
		readonly itemIndex: number,
	) {}

	read<T>(name: string, fallback: T): T {
		return this.parameters.get(name, this.itemIndex, fallback);
	}

	fail(field: string, problem: string, fix: string): NodeOperationError {
		return inputError(this.node, this.itemIndex, field, problem, fix);
	}
}
