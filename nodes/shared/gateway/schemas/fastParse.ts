import type { z } from 'zod/v4';

/**
 * A shortcut past zod for answers already in the shape a schema hands over, which is nearly every
 * answer: zod's own parse of a telephone answer costs several times the HTTP call's parsing, and its
 * temporaries outlive young-generation collections (bench section 5). The shortcut copies the value
 * exactly as zod would (same keys, same order, extra fields kept or dropped alike) and declines
 * whatever it cannot vouch for, which zod then parses, errors and all.
 */

/** Says whether a value passes through a transform unchanged; set with `unchangedWhen`. */
const keepsValue = new WeakMap<object, (value: unknown) => boolean>();

/** Marks a `.transform()` schema that returns its input as it is whenever `keeps(input)` holds. */
export function unchangedWhen<Schema extends z.ZodType>(schema: Schema, keeps: (value: unknown) => boolean): Schema {
	keepsValue.set(schema, keeps);
	return schema;
}

/** The value as the schema would output it, or `undefined` when only zod can tell. */
type Copier = (value: unknown) => { value: unknown } | undefined;

interface SchemaInternals {
	optin?: string;
	optout?: string;
	def: {
		type: string;
		checks?: unknown[];
		innerType?: object;
		in?: object;
		shape?: Record<string, object>;
		catchall?: object;
		element?: object;
		options?: object[];
	};
}

const internals = (schema: object) => (schema as { _zod: SchemaInternals })._zod;
const isPlainRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const same = (value: unknown) => ({ value });

const compiled = new WeakMap<object, Copier | null>();

function copierFor(schema: object): Copier | undefined {
	if (compiled.has(schema)) return compiled.get(schema) ?? undefined;
	compiled.set(schema, null); // a schema that refers to itself is left to zod
	const copier = compile(schema);
	compiled.set(schema, copier ?? null);
	return copier;
}

function compile(schema: object): Copier | undefined {
	const { def } = internals(schema);
	if (def.checks && def.checks.length > 0) return undefined;
	switch (def.type) {
		case 'unknown':
		case 'any':
			return same;
		case 'optional': {
			const inner = copierFor(def.innerType as object);
			return inner && ((value) => (value === undefined ? same(value) : inner(value)));
		}
		case 'nullable': {
			const inner = copierFor(def.innerType as object);
			return inner && ((value) => (value === null ? same(value) : inner(value)));
		}
		case 'pipe': {
			const keeps = keepsValue.get(schema);
			const input = keeps && copierFor(def.in as object);
			return input && ((value) => (keeps(value) ? input(value) : undefined));
		}
		case 'union': {
			// zod hands over the first option that fits: vouch only when that is the first one.
			const first = def.options?.[0] && copierFor(def.options[0]);
			return first;
		}
		case 'array': {
			const element = copierFor(def.element as object);
			return element && ((value) => copyArray(value, element));
		}
		case 'object':
			return compileObject(def.shape ?? {}, def.catchall);
		default:
			return undefined;
	}
}

function copyArray(value: unknown, element: Copier): { value: unknown } | undefined {
	if (!Array.isArray(value)) return undefined;
	const copy: unknown[] = new Array(value.length);
	for (let index = 0; index < value.length; index++) {
		const item = element(value[index]);
		if (!item) return undefined;
		copy[index] = item.value;
	}
	return { value: copy };
}

function compileObject(shape: Record<string, object>, catchall: object | undefined): Copier | undefined {
	// Extra fields: kept as they are (z.looseObject) or dropped (z.object); anything else is zod's.
	const keepsExtra = catchall !== undefined;
	if (keepsExtra && !['unknown', 'any'].includes(internals(catchall).def.type)) return undefined;
	const fields: Array<{ key: string; copy: Copier; optional: boolean }> = [];
	for (const [key, field] of Object.entries(shape)) {
		const copy = copierFor(field);
		if (!copy) return undefined;
		// zod's rule: only a field optional on both sides is left out when absent.
		const { optin, optout } = internals(field);
		fields.push({ key, copy, optional: optin === 'optional' && optout === 'optional' });
	}
	const known = new Set(Object.keys(shape));
	return (value) => {
		if (!isPlainRecord(value)) return undefined;
		const copy: Record<string, unknown> = {};
		for (const { key, copy: copyField, optional } of fields) {
			const field = value[key];
			if (optional && field === undefined) {
				if (key in value) copy[key] = undefined;
				continue;
			}
			const result = copyField(field);
			if (!result) return undefined;
			copy[key] = result.value;
		}
		if (keepsExtra) for (const key of Object.keys(value)) if (!known.has(key)) copy[key] = value[key];
		return { value: copy };
	};
}

/** `schema.safeParse(value)`, through the shortcut when the value is already in shape. */
export function parseAnswer<Schema extends z.ZodType>(schema: Schema, value: unknown): z.ZodSafeParseResult<z.output<Schema>> {
	const fast = copierFor(schema)?.(value);
	if (fast) return { success: true, data: fast.value as z.output<Schema> };
	return schema.safeParse(value);
}
