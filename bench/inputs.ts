/** Generated inputs for the benchmarks: distinct and repeated plates, distinct phone numbers. */

/** Digits without 4, so that no generated input hits the emulator's "404" not-found rule. */
function digitsWithoutFour(value: number, width: number): string {
	const digits = '012356789';
	let text = '';
	for (let rest = value; text.length < width; rest = Math.floor(rest / 9)) text = digits[rest % 9] + text;
	return text;
}

/** `count` plates of which a `repeatShare` repeat earlier ones: 京A + five digits. */
export function plates(count: number, repeatShare = 0): string[] {
	const distinct = Math.round(count * (1 - repeatShare));
	return Array.from({ length: count }, (_, index) => `京A${digitsWithoutFour(index % distinct, 5)}`);
}

/** Distinct mobile numbers. */
export function phones(count: number): string[] {
	return Array.from({ length: count }, (_, index) => `139${digitsWithoutFour(index, 8)}`);
}

/** Series letters after 京 for many distinct plates (I and O are not used on plates). */
const SERIES = 'ABCDEFGHJKLMNPQRSTUVWXY';
const FIVE_DIGITS = 9 ** 5;

/** The `index`-th of more distinct plates than `plates` makes (up to 1.3 million): 京, a series letter, five digits. */
export function manyPlate(index: number): string {
	return `京${SERIES[Math.floor(index / FIVE_DIGITS) % SERIES.length]}${digitsWithoutFour(index % FIVE_DIGITS, 5)}`;
}
