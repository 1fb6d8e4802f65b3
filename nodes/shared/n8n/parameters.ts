import type { IExecuteFunctions } from 'n8n-workflow';

function containsExpression(raw: unknown): boolean {
	if (typeof raw === 'string') return raw.startsWith('=');
	if (raw !== null && typeof raw === 'object') return Object.values(raw).some(containsExpression);
	return false;
}

/**
 * Node parameters read for many items. n8n resolves every read through its expression engine and
 * validation; a parameter without an expression has the same value for every item, so it is read
 * once. Values are shared between items: treat them as read-only.
 */
export class ItemParameters {
	private readonly fixed = new Map<string, unknown>();
	private readonly perItem = new Set<string>();

	constructor(private readonly ctx: IExecuteFunctions) {}

	get<T>(name: string, itemIndex: number, fallback: T): T {
		if (this.fixed.has(name)) return this.fixed.get(name) as T;
		const value = this.ctx.getNodeParameter(name, itemIndex, fallback) as T;
		if (!this.perItem.has(name)) {
			if (containsExpression(this.ctx.getNode().parameters[name])) this.perItem.add(name);
			else this.fixed.set(name, value);
		}
		return value;
	}
}
