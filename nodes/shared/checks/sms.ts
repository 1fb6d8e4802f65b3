/** SMS rules of docs/gateway-api.md#limits, checked before anything is paid. Pure functions. */
import {
	LONG_SEGMENT_CHARS,
	MAX_TEMPLATE_VARIABLES,
	MAX_VARIABLE_VALUE_LENGTH,
	PRICES_YUAN,
	RESERVED_VARIABLE_NAMES,
	SIGNATURE_BRACKETS,
	SINGLE_SEGMENT_MAX_CHARS,
} from '../gateway/catalog';

/** `undefined` when the input is fine, otherwise what is wrong. */
export type Problem = string | undefined;

const VARIABLE_NAME = /^[A-Za-z_]+$/;
const PLACEHOLDER = /\$\{([^}]*)\}/g;

/**
 * A signature or template ID as typed or mapped: decimal digits only, within the safe integer range
 * (`0x10`, `1e2`, `0b11` and 20 digits would each reach the gateway as another ID). Gives the ID or what is wrong.
 */
export function checkGatewayId(raw: unknown): { id: number; problem?: undefined } | { id?: undefined; problem: string } {
	const text = String(raw ?? '').trim();
	if (text === '') return { problem: 'is empty' };
	if (!/^\d+$/.test(text)) return { problem: `"${text}" is not a positive whole number written with the digits 0-9` };
	const id = Number(text);
	if (id === 0) return { problem: 'is 0' };
	if (!Number.isSafeInteger(id)) return { problem: `"${text}" is too large to be an ID (at most ${Number.MAX_SAFE_INTEGER})` };
	return { id };
}

/** Whether `name` is a variable given in `variables` itself: names like `constructor` are not inherited values. */
export function hasVariable(variables: Record<string, string>, name: string): boolean {
	return Object.hasOwn(variables, name);
}

export function checkVariableName(name: string): Problem {
	if (!VARIABLE_NAME.test(name)) return `"${name}" may use only letters and underscore (no digits, spaces or other characters)`;
	if (RESERVED_VARIABLE_NAMES.includes(name.toLowerCase())) {
		return `"${name}" is reserved by the gateway (${RESERVED_VARIABLE_NAMES.join(', ')} cannot be used)`;
	}
	return undefined;
}

/** Variables of one send: names, count and value lengths. */
export function checkVariables(variables: Record<string, string>): Problem {
	const names = Object.keys(variables);
	if (names.length > MAX_TEMPLATE_VARIABLES) return `has ${names.length} variables; a template allows at most ${MAX_TEMPLATE_VARIABLES}`;
	for (const name of names) {
		const problem = checkVariableName(name);
		if (problem) return problem;
		const length = [...variables[name]].length;
		if (length > MAX_VARIABLE_VALUE_LENGTH) {
			return `value of "${name}" has ${length} characters; at most ${MAX_VARIABLE_VALUE_LENGTH} are allowed (use a short URL for links)`;
		}
	}
	return undefined;
}

export function templateVariableNames(content: string): string[] {
	return [...content.matchAll(PLACEHOLDER)].map((match) => match[1]);
}

/** Template text: well-formed `${name}` placeholders, valid names, at most 8, no signature brackets. */
export function checkTemplateContent(content: string): Problem {
	if (content.trim() === '') return 'is empty';
	const bracket = SIGNATURE_BRACKETS.find((character) => content.includes(character));
	if (bracket) return `contains "${bracket}"; brackets that mark signatures are not allowed in templates`;
	const withoutPlaceholders = content.replace(PLACEHOLDER, '');
	if (withoutPlaceholders.includes('${')) return 'has a "${" without a closing "}"; write variables as ${name}';
	const names = templateVariableNames(content);
	for (const name of names) {
		const problem = checkVariableName(name);
		if (problem) return `has the variable ${problem}`;
	}
	const distinct = new Set(names).size;
	if (distinct > MAX_TEMPLATE_VARIABLES) return `has ${distinct} variables; at most ${MAX_TEMPLATE_VARIABLES} are allowed`;
	return undefined;
}

/** Signature text: Chinese characters, letters and digits only (no brackets or other special characters). */
export function checkSignatureName(name: string): Problem {
	if (name.trim() === '') return 'is empty';
	const bad = [...name].find((character) => !/[\u4e00-\u9fffA-Za-z0-9]/.test(character));
	if (bad !== undefined) return `contains "${bad}"; a signature may use only Chinese characters, letters and digits (no brackets or special characters)`;
	return undefined;
}

/**
 * The variables of one send against the template's placeholders: every placeholder needs a value,
 * and no value may be given that the template does not use (for a template without variables the
 * gateway refuses `params` altogether).
 */
export function checkVariablesAgainstTemplate(content: string, variables: Record<string, string>): Problem {
	const placeholders = new Set(templateVariableNames(content));
	const given = Object.keys(variables);
	if (placeholders.size === 0 && given.length > 0) {
		return `gives ${given.map((name) => `"${name}"`).join(', ')}, but the template has no variables (the gateway refuses variables for such a template)`;
	}
	const missing = [...placeholders].filter((name) => !hasVariable(variables, name));
	if (missing.length > 0) return `has no value for ${missing.map((name) => `\${${name}}`).join(', ')}, which the template uses`;
	const unused = given.filter((name) => !placeholders.has(name));
	if (unused.length > 0) return `has ${unused.map((name) => `"${name}"`).join(', ')}, which the template does not use`;
	return undefined;
}

export function renderTemplate(content: string, variables: Record<string, string>): string {
	return content.replace(PLACEHOLDER, (placeholder, name: string) => (hasVariable(variables, name) ? variables[name] : placeholder));
}

export interface MessageSize {
	/** Signature with its 【】 plus content: every character counts as one. */
	length: number;
	segments: number;
	estimatedCostYuan: number;
}

/**
 * The 2 brackets 【】 around the signature in the delivered text. The gateway counts "template content
 * + signature" and does not say whether they count: counting them keeps the estimate from ever
 * falling below what the gateway bills.
 */
export const SIGNATURE_BRACKET_CHARS = 2;

/** The 70 / 67 rule: up to 70 characters is one message, above that 67 characters a message. */
export function messageSize(signature: string, renderedContent: string): MessageSize {
	const length = SIGNATURE_BRACKET_CHARS + [...signature].length + [...renderedContent].length;
	const segments = length <= SINGLE_SEGMENT_MAX_CHARS ? 1 : Math.ceil(length / LONG_SEGMENT_CHARS);
	return { length, segments, estimatedCostYuan: Math.round(segments * PRICES_YUAN.smsSegment * 10000) / 10000 };
}
