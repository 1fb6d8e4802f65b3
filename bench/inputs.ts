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
