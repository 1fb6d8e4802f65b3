/**
 * The content rules of docs/gateway-api.md#limits, on top of the form rules of sms.ts. The gateway
 * freezes a signature and template whose content breaks them, and does not refund packages, so:
 * - refusals: rules a program can decide (the form rules of sms.ts, links to app test-distribution
 *   sites, test wording in a signature). Nothing is sent to the gateway.
 * - warnings: rules for people to judge (prohibited content, variant or interference characters in
 *   key words, over-broad signatures). Each names the rule and the words as written.
 * The words are in contentWords.ts. Pure functions.
 */
import { checkSignatureName as signatureFormProblem, checkTemplateContent as templateFormProblem } from './sms';
import { GENERIC_SIGNATURE_WORDS, PROHIBITED_CONTENT, SIGNATURE_TEST_WORDS, TEST_DISTRIBUTION_HOSTS } from './contentWords';
import { deepFold, INVISIBLE, isLookalike, lightFold, maskPlaceholders, originalSpans, wordPattern } from './contentFold';

export type ContentRule =
	| 'template-form'
	| 'signature-form'
	| 'test-distribution-link'
	| 'test-wording'
	| 'prohibited-content'
	| 'variant-characters'
	| 'invisible-characters'
	| 'mixed-width'
	| 'lookalike-letters'
	| 'over-broad-name';

export interface ContentFinding {
	rule: ContentRule;
	/** The rule in words, e.g. "prohibited content: gambling". */
	title: string;
	/** What the text holds, as written. */
	words: string[];
	/** Reads after the field's name ("Content holds …"): what is wrong, naming the words. */
	problem: string;
	/** What to do about it. */
	fix: string;
}

export interface ContentReview {
	/** Objective rules: the text must not reach the gateway. */
	refusals: ContentFinding[];
	/** Judgement rules: shown, and refused only where the user asks for it (Send's "Refuse Content Warnings"). */
	warnings: ContentFinding[];
}

const quote = (words: string[]) => words.map((word) => `"${word}"`).join(', ');
const unique = (words: string[]) => [...new Set(words)];
const WITHOUT_REFUND = 'and freezes a signature and template that break it, without refunding packages';

const CATEGORIES = PROHIBITED_CONTENT.map((category) => ({
	title: category.title,
	words: category.words.map((word) => ({ word: lightFold(word).text, pattern: wordPattern(word) })),
	except: (category.except ?? []).map(wordPattern),
}));

interface KeyWordHit {
	category: string;
	word: string;
	written: string;
	start: number;
	end: number;
	/** The writing is not the word itself: look-alike, variant, invisible or interference characters. */
	disguised: boolean;
}

/** Listed words in the text, read through any disguise, in text order; a word inside a longer one of its category is left out. */
function keyWordHits(raw: string): KeyWordHit[] {
	const folded = deepFold(maskPlaceholders(raw));
	const hits: KeyWordHit[] = [];
	for (const category of CATEGORIES) {
		// The category's ordinary phrases are blanked out, so their words are not found.
		const text = category.except.reduce((masked, pattern) => masked.replace(pattern, (phrase) => '\uE000'.repeat(phrase.length)), folded.text);
		const found: KeyWordHit[] = [];
		for (const { word, pattern } of category.words) {
			for (const { start, end, matched } of originalSpans({ text, spans: folded.spans }, pattern)) {
				const written = raw.slice(start, end);
				found.push({ category: category.title, word, written, start, end, disguised: lightFold(written).text !== matched });
			}
		}
		found.sort((a, b) => b.end - b.start - (a.end - a.start));
		for (const hit of found) {
			if (!hits.some((kept) => kept.category === hit.category && kept.start <= hit.start && hit.end <= kept.end)) hits.push(hit);
		}
	}
	return hits.sort((a, b) => a.start - b.start);
}

function keyWordWarnings(raw: string): ContentFinding[] {
	const hits = keyWordHits(raw);
	const warnings: ContentFinding[] = [];
	for (const category of unique(hits.filter((hit) => !hit.disguised).map((hit) => hit.category))) {
		const words = unique(hits.filter((hit) => !hit.disguised && hit.category === category).map((hit) => hit.written));
		warnings.push({
			rule: 'prohibited-content',
			title: `prohibited content: ${category}`,
			words,
			problem: `holds ${quote(words)}, which the gateway's rules list as prohibited content (${category})`,
			fix: `The gateway prohibits such content ${WITHOUT_REFUND}. Reword it; where the words mean something ordinary, the gateway's reviewers decide.`,
		});
	}
	const disguised = hits.filter((hit) => hit.disguised);
	if (disguised.length > 0) {
		const words = unique(disguised.map((hit) => hit.written));
		const readings = unique(disguised.map((hit) => `"${hit.written}" (read as ${hit.word}: ${hit.category})`));
		warnings.push({
			rule: 'variant-characters',
			title: 'variant or interference characters in key words',
			words,
			problem: `writes key words in a disguised form: ${readings.join(', ')}`,
			fix: `The gateway prohibits misspelled, variant or interference characters in key wording ${WITHOUT_REFUND}. Write the words plainly, or leave them out.`,
		});
	}
	return warnings;
}

/** A few characters before a position, to say where an invisible character is. */
function before(raw: string, index: number): string {
	const text = [...raw.slice(Math.max(0, index - 6), index)].slice(-3).join('');
	return text === '' ? 'at the start' : `after "${text}"`;
}

/** A zero-width joiner between two pictographs builds an emoji (👨‍👩‍👧): not interference. */
const PICTOGRAPH = /[\p{Extended_Pictographic}\uFE0F]/u;

function invisibleWarning(raw: string): ContentFinding | undefined {
	const places: string[] = [];
	const characters = [...raw];
	let index = 0;
	characters.forEach((character, position) => {
		const emojiJoiner = character === '\u200D' && PICTOGRAPH.test(characters[position - 1] ?? '') && PICTOGRAPH.test(characters[position + 1] ?? '');
		if (INVISIBLE.test(character) && !emojiJoiner) places.push(`U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} ${before(raw, index)}`);
		index += character.length;
	});
	if (places.length === 0) return undefined;
	return {
		rule: 'invisible-characters',
		title: 'invisible (zero-width) characters',
		words: places,
		problem: `holds invisible characters: ${places.join(', ')}`,
		fix: 'The gateway treats them as interference characters. Delete them: they often come with text copied from a web page or chat.',
	};
}

const FULL_WIDTH_LETTER = /[\uFF21-\uFF3A\uFF41-\uFF5A]/;

/** Words (runs of letters and digits) that mix full-width and half-width letters, e.g. "ＶIP". */
function mixedWidthWarning(raw: string): ContentFinding | undefined {
	const words = unique(
		// Stryker disable next-line ArrayDeclaration: a text standing in for no match has no full-width letter, so the filter drops it.
		(maskPlaceholders(raw).match(/[A-Za-z0-9\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]+/g) ?? []).filter((word) => FULL_WIDTH_LETTER.test(word) && /[A-Za-z]/.test(word)),
	);
	if (words.length === 0) return undefined;
	return {
		rule: 'mixed-width',
		title: 'mixed full-width and half-width letters',
		words,
		problem: `mixes full-width and half-width letters in ${quote(words)}`,
		fix: `Write each word in one width, e.g. "${words[0].normalize('NFKC')}": the gateway treats mixed forms as variant characters.`,
	};
}

/** Latin words with a Cyrillic or Greek letter that looks like a Latin one, e.g. "саsino" with Cyrillic "с", "а". */
function lookalikeWarning(raw: string): ContentFinding | undefined {
	const words = unique(
		// Stryker disable next-line ArrayDeclaration: a text standing in for no match has no look-alike letter, so the filter drops it.
		(maskPlaceholders(raw).match(/[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}]+/gu) ?? []).filter(
			(word) => /\p{Script=Latin}/u.test(word) && [...word].some(isLookalike),
		),
	);
	if (words.length === 0) return undefined;
	const letters = unique(words.flatMap((word) => [...word].filter(isLookalike)));
	return {
		rule: 'lookalike-letters',
		title: 'look-alike letters from another alphabet',
		words,
		problem: `writes ${quote(words)} with Cyrillic or Greek letters that look like Latin ones (${quote(letters)})`,
		fix: 'Retype the words in Latin letters: the gateway treats look-alike letters as variant characters.',
	};
}

const LINK_HOSTS = TEST_DISTRIBUTION_HOSTS.map((host) =>
	host
		.split('.')
		.map((label) => (label === '*' ? '[a-z]{2,}' : label.replace(/[-]/g, '\\-')))
		.join('[.。]'),
);
/** A listed host, with any subdomains before it and any path after it; "。" as a dot too. */
const TEST_DISTRIBUTION_LINK = new RegExp(`(?<![a-z0-9-])(?:[a-z0-9-]+[.。])*(?:${LINK_HOSTS.join('|')})(?![a-z0-9-])(?:[/?#][!-~]*)?`, 'g');

function testDistributionRefusal(raw: string): ContentFinding | undefined {
	const links = unique(originalSpans(deepFold(maskPlaceholders(raw)), TEST_DISTRIBUTION_LINK).map(({ start, end }) => raw.slice(start, end)));
	if (links.length === 0) return undefined;
	return {
		rule: 'test-distribution-link',
		title: 'link to an app test-distribution site',
		words: links,
		problem: `links to an app test-distribution site: ${quote(links)}`,
		fix: `The gateway prohibits links to app test-distribution platforms ${WITHOUT_REFUND}. Link to an app store page or your own site instead.`,
	};
}

/** A message's wording: what a template, or a message with its values filled in, says. */
export function reviewMessageText(text: string): ContentReview {
	const link = testDistributionRefusal(text);
	const warnings = [...keyWordWarnings(text), invisibleWarning(text), mixedWidthWarning(text), lookalikeWarning(text)];
	return { refusals: link ? [link] : [], warnings: warnings.filter((warning): warning is ContentFinding => warning !== undefined) };
}

/** A template's content for Template Create/Update: the form rules of sms.ts, then its wording. */
export function reviewTemplateContent(content: string): ContentReview {
	const review = reviewMessageText(content);
	const form = templateFormProblem(content);
	if (form === undefined) return review;
	const refusal: ContentFinding = {
		rule: 'template-form',
		title: 'template rules',
		words: [],
		problem: form,
		fix: 'Write variables as ${name} with letters and underscore, and leave out 【】 and [].',
	};
	return { refusals: [refusal, ...review.refusals], warnings: review.warnings };
}

const LATIN_TEST_WORDS = SIGNATURE_TEST_WORDS.filter((word) => /^[a-z]+$/.test(word));
const CHINESE_TEST_WORDS = SIGNATURE_TEST_WORDS.filter((word) => !LATIN_TEST_WORDS.includes(word)).map(wordPattern);

/** Test wording as written: Chinese words anywhere, Latin ones as words of their own ("MyTest", "test1"; not "Contest"). */
function testWords(name: string): string[] {
	const folded = deepFold(name);
	const chinese = CHINESE_TEST_WORDS.flatMap((pattern) => originalSpans(folded, pattern).map(({ start, end }) => name.slice(start, end)));
	// Stryker disable next-line ArrayDeclaration: a text standing in for no match holds no test word, so the filter below drops it.
	const latinRuns = name.normalize('NFKC').match(/[A-Za-z]+/g) ?? [];
	// Stryker disable next-line ArrayDeclaration: as above (each run has letters, so it always matches).
	const latin = latinRuns.flatMap((run) => run.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+/g) ?? []).filter((word) => LATIN_TEST_WORDS.includes(word.toLowerCase()));
	return unique([...chinese, ...latin]);
}

const GENERIC_WORDS = [...GENERIC_SIGNATURE_WORDS].sort((a, b) => b.length - a.length);

/** A signature of generic words alone ("短信通知", "官方客服", "SMS") names no sender. */
function overBroad(name: string): boolean {
	const rest = GENERIC_WORDS.reduce((text, word) => text.split(word).join(' '), lightFold(name).text);
	return name.trim() !== '' && rest.replace(/[\s0-9]/g, '') === '';
}

/** A signature's text for Signature Create/Update (and the signature of a message in Preview). */
export function reviewSignatureName(name: string): ContentReview {
	const refusals: ContentFinding[] = [];
	const form = signatureFormProblem(name);
	if (form !== undefined) {
		refusals.push({ rule: 'signature-form', title: 'signature rules', words: [], problem: form, fix: 'Use only Chinese characters, letters and digits, e.g. your brand name.' });
	}
	const tests = testWords(name);
	if (tests.length > 0) {
		refusals.push({
			rule: 'test-wording',
			title: 'test wording in a signature',
			words: tests,
			problem: `holds test wording: ${quote(tests)}`,
			fix: 'The gateway does not accept test wording in a signature. Use your brand, company or app name.',
		});
	}
	const warnings = keyWordWarnings(name);
	if (overBroad(name)) {
		warnings.push({
			rule: 'over-broad-name',
			title: 'over-broad signature',
			words: [name.trim()],
			problem: `"${name.trim()}" is made only of generic words, which the gateway does not accept as a signature`,
			fix: 'Use your brand, company or app name.',
		});
	}
	return { refusals, warnings };
}

/** One line per finding, e.g. for an execution hint or an output field: "Content holds …. The gateway …". */
export function findingTexts(field: string, findings: ContentFinding[]): string[] {
	return findings.map((finding) => `${field} ${finding.problem}. ${finding.fix}`);
}

/** What stops an item: the refusals, and the warnings too when the user asked to refuse them. */
export function blockingFindings(review: ContentReview, refuseWarnings: boolean): ContentFinding[] {
	return refuseWarnings ? [...review.refusals, ...review.warnings] : review.refusals;
}
