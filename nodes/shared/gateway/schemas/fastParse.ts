import type { z } from 'zod/v4';

/**
 * A shortcut past zod for answers already in the shape a schema hands over, which is nearly every
 * answer: zod's own parse of a telephone answer costs several times the HTTP call's JSON parsing, and
 * its temporaries outlive young-generation collections (bench sections 4 and 5). The shortcut hands
 * over what zod would (same keys, same order, extra fields kept or dropped alike) and declines
 * whatever it cannot vouch for, which zod then parses, errors and all.
 */

/** Says whether a value passes through a transform unchanged; set with `unchangedWhen`. */
const keepsValue = new WeakMap<object, (value: unknown) => boolean>();

/** Marks a `.transform()` schema that returns its input as it is whenever `keeps(input)` holds. */
export function unchangedWhen<Schema extends z.ZodType>(schema: Schema, keeps: (value: unknown) => boolean): Schema {
	keepsValue.set(schema, keeps);
	return schema;
}

/** What a copier returns for a value only zod can tell about. */
const DECLINED: unique symbol = Symbol('declined');

/**
 * The value as the schema would output it, or DECLINED. A value that would come out unchanged is
 * handed back itself rather than copied: an answer is kept for the whole execution, and a copy per
 * answer doubles what the young generation carries.
 */
type Copier = (value: unknown) => unknown;

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
			return (value) => value;
		case 'optional': {
			const inner = copierFor(def.innerType as object);
			return inner && ((value) => (value === undefined ? value : inner(value)));
		}
		case 'nullable': {
			const inner = copierFor(def.innerType as object);
			return inner && ((value) => (value === null ? value : inner(value)));
		}
		case 'pipe': {
			const keeps = keepsValue.get(schema);
			const input = keeps && copierFor(def.in as object);
			return input && ((value) => (keeps(value) ? input(value) : DECLINED));
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

function copyArray(value: unknown, element: Copier): unknown {
	if (!Array.isArray(value)) return DECLINED;
	let copy: unknown[] | undefined;
	for (let index = 0; index < value.length; index++) {
		const item = element(value[index]);
		if (item === DECLINED) return DECLINED;
		if (item !== value[index]) copy ??= value.slice(0, index);
		if (copy) copy[index] = item;
	}
	return copy ?? value;
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

	/** A new object as zod builds it: the schema's fields in its order, then the extra ones. */
	const copyObject = (value: Record<string, unknown>): unknown => {
		const copy: Record<string, unknown> = {};
		for (const { key, copy: copyField, optional } of fields) {
			const field = value[key];
			if (optional && field === undefined) {
				if (key in value) copy[key] = undefined;
				continue;
			}
			const result = copyField(field);
			if (result === DECLINED) return DECLINED;
			copy[key] = result;
		}
		if (keepsExtra) for (const key of Object.keys(value)) if (!known.has(key)) copy[key] = value[key];
		return copy;
	};

	// The value itself when zod's copy would equal it: the same fields, unchanged, in the same order.
	return (value) => {
		if (!isPlainRecord(value)) return DECLINED;
		const keys = Object.keys(value);
		let position = 0;
		for (const { key, copy, optional } of fields) {
			const field = value[key];
			if (keys[position] === key) {
				position++;
				if (optional && field === undefined) continue;
				const result = copy(field);
				if (result === DECLINED) return DECLINED;
				if (result !== field) return copyObject(value);
			} else if (!(optional && field === undefined && !(key in value))) {
				return copyObject(value); // absent where zod sets it, inherited, or out of order
			}
		}
		for (; position < keys.length; position++) if (!keepsExtra || known.has(keys[position])) return copyObject(value);
		return value;
	};
}

/** `schema.safeParse(value)`, through the shortcut when the value is already in shape. */
export function parseAnswer<Schema extends z.ZodType>(schema: Schema, value: unknown): z.ZodSafeParseResult<z.output<Schema>> {
	const copier = copierFor(schema);
	const fast = copier ? copier(value) : DECLINED;
	if (fast !== DECLINED) return { success: true, data: fast as z.output<Schema> };
	return schema.safeParse(value);
}
