/** `1 item`, `2 items`; `nouns` for a plural that is not noun + s (`SMS`). */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
	return `${count} ${count === 1 ? noun : nouns}`;
}
