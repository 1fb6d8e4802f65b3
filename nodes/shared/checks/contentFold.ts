/**
 * Text folded for the content checks (content.ts), keeping for every folded character the stretch
 * of the original it came from, so that a finding can quote the words as the user wrote them.
 */
import { VARIANT_WORDS } from './contentWords';

export interface FoldedText {
	text: string;
	/** Per UTF-16 unit of `text`: the original's [start, end). */
	spans: Array<[number, number]>;
}

/** Stands in for each character of a ${name} placeholder: the variable's name is not the message's wording. */
const MASK = '\uE000';
const PLACEHOLDER = /\$\{[^}]*\}/g;

export function maskPlaceholders(raw: string): string {
	return raw.replace(PLACEHOLDER, (placeholder) => MASK.repeat(placeholder.length));
}

/**
 * Characters that show nothing: zero-width spaces and joiners, direction marks, the soft hyphen,
 * the byte-order mark, the Hangul filler, the combining grapheme joiner (kept out of the class, as
 * it combines with its neighbour). In SMS text they serve only to break up words.
 */
export const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u3164]|\u034F/;

/** Cyrillic and Greek letters (lower case) that look like Latin ones. */
const LOOKALIKES: Readonly<Record<string, string>> = {
	а: 'a', в: 'b', е: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x', і: 'i', ј: 'j', ѕ: 's', ԁ: 'd', ӏ: 'l',
	α: 'a', β: 'b', ε: 'e', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x',
};

/** Whether a character (any case) is a Cyrillic or Greek letter that looks like a Latin one. */
export function isLookalike(character: string): boolean {
	return Object.hasOwn(LOOKALIKES, character.toLowerCase());
}

/** Put between Chinese characters to break up a word ("贷*款", "赌 博"); a run of at most 3 is removed. */
const SEPARATOR = /[\s*\-_.·•・/|\\~#^+=]/;
const MAX_SEPARATOR_RUN = 3;
const HAN = /\p{Script=Han}/u;

/** Full-width and compatibility forms to plain ones (NFKC), lower case, curly apostrophes straight. */
export function lightFold(raw: string): FoldedText {
	let text = '';
	const spans: Array<[number, number]> = [];
	let index = 0;
	for (const character of raw) {
		const folded = character.normalize('NFKC').toLowerCase().replace(/[\u2018\u2019]/g, "'");
		for (let unit = 0; unit < folded.length; unit++) spans.push([index, index + character.length]);
		text += folded;
		index += character.length;
	}
	return { text, spans };
}

function units(folded: FoldedText): Array<{ unit: string; span: [number, number] }> {
	return folded.text.split('').map((unit, index) => ({ unit, span: folded.spans[index] }));
}

function joined(list: Array<{ unit: string; span: [number, number] }>): FoldedText {
	return { text: list.map((entry) => entry.unit).join(''), spans: list.map((entry) => entry.span) };
}

/** Drops separator runs between two Chinese characters. */
function withoutInterference(list: Array<{ unit: string; span: [number, number] }>) {
	const kept: typeof list = [];
	for (let index = 0; index < list.length; index++) {
		if (SEPARATOR.test(list[index].unit) && kept.length > 0 && HAN.test(kept[kept.length - 1].unit)) {
			let end = index;
			while (end < list.length && SEPARATOR.test(list[end].unit)) end++;
			if (end - index <= MAX_SEPARATOR_RUN && end < list.length && HAN.test(list[end].unit)) {
				index = end - 1;
				continue;
			}
		}
		kept.push(list[index]);
	}
	return kept;
}

/** A pattern for a listed word or written form, as contentWords.ts describes the matching. */
export function wordPattern(word: string): RegExp {
	const folded = lightFold(word).text;
	const body = folded.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ +/g, '\\s+');
	const head = /^[a-z0-9]/.test(folded) ? '(?<![a-z0-9])' : '';
	const tail = /[a-z0-9]$/.test(folded) ? '(?![a-z0-9])' : '';
	return new RegExp(`${head}${body}${tail}`, 'g');
}

const VARIANTS = Object.entries(VARIANT_WORDS).map(([written, meant]) => ({ pattern: wordPattern(written), meant }));

/** Replaces the listed variant forms by the words they stand for; the replacement covers the whole form's span. */
function withVariantsRead(folded: FoldedText): FoldedText {
	let current = folded;
	for (const { pattern, meant } of VARIANTS) {
		const matches = [...current.text.matchAll(pattern)];
		if (matches.length === 0) continue;
		let text = '';
		const spans: Array<[number, number]> = [];
		let at = 0;
		for (const match of matches) {
			const start = match.index;
			const end = start + match[0].length;
			text += current.text.slice(at, start);
			spans.push(...current.spans.slice(at, start));
			const span: [number, number] = [current.spans[start][0], current.spans[end - 1][1]];
			text += meant;
			for (let unit = 0; unit < meant.length; unit++) spans.push(span);
			at = end;
		}
		current = { text: text + current.text.slice(at), spans: [...spans, ...current.spans.slice(at)] };
	}
	return current;
}

/**
 * The text as a filter dodger means it to be read: invisible characters gone, look-alike letters
 * read as Latin, separators inside Chinese words gone, listed variant forms read as their words.
 */
export function deepFold(raw: string): FoldedText {
	const list = units(lightFold(raw))
		.filter((entry) => !INVISIBLE.test(entry.unit))
		.map((entry) => ({ unit: LOOKALIKES[entry.unit] ?? entry.unit, span: entry.span }));
	return withVariantsRead(joined(withoutInterference(list)));
}

/** Where a pattern matches in folded text, as spans of the original. */
export function originalSpans(folded: FoldedText, pattern: RegExp): Array<{ start: number; end: number; matched: string }> {
	return [...folded.text.matchAll(pattern)]
		.filter((match) => match[0].length > 0)
		.map((match) => ({ start: folded.spans[match.index][0], end: folded.spans[match.index + match[0].length - 1][1], matched: match[0] }));
}
