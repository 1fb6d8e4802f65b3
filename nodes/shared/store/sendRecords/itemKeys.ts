import type { ItemKeys } from './decisions';

/** The items' keys; without the counts for decisions that never touch them (mark sent, and a claim's first try). */
export const keysOfItems = (items: ItemKeys[], counts = true) =>
	[...new Set(items.flatMap((item) => [item.sendKey, item.messageKey, ...(counts ? item.countKeys : [])]))];
/** The number each key of the items is about (StoreWrite.phone): what erasing that number finds. */
export function phonesOfItems(items: ItemKeys[]): Map<string, string> {
	const phones = new Map<string, string>();
	for (const { phone, sendKey, messageKey, countKeys } of items) if (phone !== undefined) for (const key of [sendKey, messageKey, ...countKeys]) phones.set(key, phone);
	return phones;
}
