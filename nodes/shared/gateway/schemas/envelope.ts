import { z } from 'zod/v4';

import { unchangedWhen } from './fastParse';

function kindOf(value: unknown): string {
	return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/**
 * Tolerant readers for fields whose JSON type drifts (the gateway's samples mix "1" and 1; docs/gateway-api.md#answers).
 * Each accepts both forms and hands the node the type the gateway's document declares. Written as one
 * transform each, not a union, because they run for every field of every answer.
 */
export const looseString = unchangedWhen(
	z.unknown().transform((value, context) => {
		if (typeof value === 'string') return value;
		if (typeof value === 'number' || typeof value === 'boolean') return String(value);
		context.addIssue({ code: 'custom', message: `expected text, received ${kindOf(value)}` });
		return z.NEVER;
	}),
	(value) => typeof value === 'string',
);

function looseNumeric(pattern: RegExp, what: string) {
	const isWanted = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && (what !== 'an integer' || Number.isInteger(value));
	return unchangedWhen(
		z.unknown().transform((value, context) => {
			if (isWanted(value)) return value as number;
			if (typeof value === 'string' && pattern.test(value.trim())) return Number(value);
			context.addIssue({ code: 'custom', message: `expected ${what}, received ${kindOf(value)}${typeof value === 'string' ? ` "${value.slice(0, 20)}"` : ''}` });
			return z.NEVER;
		}),
		isWanted,
	);
}

export const looseNumber = looseNumeric(/^-?\d+(\.\d+)?$/, 'a number');
export const looseInteger = looseNumeric(/^-?\d+$/, 'an integer');

/** An object whose unknown extra fields are kept, not stripped. */
export function record<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
	return z.looseObject(shape);
}

/** Where the gateway does not say whether `data` is one object or a list: always hand over a list. */
export function oneOrMany<Item extends z.ZodType>(item: Item) {
	return z.union([z.array(item), item.transform((value) => [value])]);
}

export const envelopeSchema = record({
	code: looseInteger,
	message: unchangedWhen(
		looseString
			.optional()
			.nullable()
			.transform((value) => value ?? undefined),
		(value) => value !== null,
	),
	data: z.unknown().optional(),
});

/** Names the first field that does not fit, e.g. `data.records[2].time: Expected string, received object`. */
export function describeSchemaProblem(error: z.ZodError, root?: string): string {
	let issue: z.core.$ZodIssue | undefined = error.issues[0];
	let prefix: PropertyKey[] = [];
	// A union hides the real problem one level down; its nested issue's path is relative to the union.
	while (issue?.code === 'invalid_union' && issue.errors[0]?.[0]) {
		prefix = [...prefix, ...issue.path];
		issue = issue.errors[0][0];
	}
	if (!issue) return 'unknown problem';
	const path = [root, ...[...prefix, ...issue.path].map((part) => (typeof part === 'number' ? `[${part}]` : String(part)))]
		.filter((part) => part !== undefined && part !== '')
		.join('.')
		.replace(/\.\[/g, '[');
	return `${path || 'the answer'}: ${issue.message}`;
}
