import type { ILoadOptionsFunctions } from 'n8n-workflow';

/**
 * The values typed into Template Variables, kept for a template change. When the Template changes,
 * n8n's editor empties the variables form and fills each new field with its `defaultValue`, so a
 * value survives only if the form's method hands it back. The editor sends the node's parameters
 * with every list search and form load (opening the Template list is how a template is changed),
 * so the values are noted there and given back to a field of the same name.
 *
 * Kept in this process's memory only (the editor asks the main process), per node, for an hour at
 * most and for a bounded number of nodes: a convenience of the form, never written to a store.
 */
const KEPT_MS = 3_600_000;
const MAX_NODES = 200;

interface Kept {
	values: Record<string, string>;
	at: number;
}
const kept = new Map<string, Kept>();

/** One node of one workflow: n8n's node ID, which stays when the node is renamed. */
function keyOf(ctx: ILoadOptionsFunctions): string {
	const node = ctx.getNode();
	return `${ctx.getWorkflow?.().id ?? ''}|${node.id ?? node.name}`;
}

/** The values the form holds now, as text; empty ones are not values. */
function currentValues(ctx: ILoadOptionsFunctions): Record<string, string> {
	let mapping: unknown;
	try {
		mapping = ctx.getCurrentNodeParameter('templateVariables');
	} catch {
		return {};
	}
	const value = (mapping as { value?: Record<string, unknown> | null } | undefined)?.value ?? {};
	const values: Record<string, string> = {};
	for (const [name, text] of Object.entries(value)) if ((typeof text === 'string' && text !== '') || typeof text === 'number') values[name] = String(text);
	return values;
}

/** Notes the form's values (merged over what was kept) and returns what is kept for this node. */
export function noteVariableValues(ctx: ILoadOptionsFunctions, now = Date.now()): Record<string, string> {
	for (const [key, entry] of kept) if (now - entry.at > KEPT_MS) kept.delete(key);
	const key = keyOf(ctx);
	const values = { ...kept.get(key)?.values, ...currentValues(ctx) };
	kept.delete(key);
	if (Object.keys(values).length === 0) return values;
	kept.set(key, { values, at: now });
	if (kept.size > MAX_NODES) kept.delete(kept.keys().next().value as string);
	return values;
}

/** A sentence naming the kept values a template without those variables leaves aside, else ''. */
export function valuesLeftAside(values: Record<string, string>, names: readonly string[]): string {
	const aside = Object.keys(values).filter((name) => !names.includes(name));
	if (aside.length === 0) return '';
	const named = aside.map((name) => `\${${name}}`).join(', ');
	return ` Not in this template: ${named}; ${aside.length === 1 ? 'its value is' : 'their values are'} kept for a template that uses ${aside.length === 1 ? 'it' : 'them'}.`;
}
