import type { ItemKeys, RunIdentity } from './decisions';
import { countKeyOf, messageKeyOf, sendKeyOf } from './recordValues';
import { countWindows } from './rules';
import type { RecordedSend, RecordRules, RecordsScope } from './sendRecords';

/** The keys of one send's records in this node run: its send, its message and the number's counts for the limits' windows at `now`. */
export function keysOfSend(scope: RecordsScope, rules: RecordRules, run: RunIdentity, send: RecordedSend, now: number): ItemKeys {
	const { node, execution, runIndex } = scope;
	const windows = countWindows(rules.limits, send.phone, now);
	return {
		itemIndex: send.itemIndex,
		phone: send.phone,
		sendKey: sendKeyOf(node, execution, runIndex, send.itemIndex),
		// With a window of 0 too, under a key of its own (it guards nothing): a crashed run's reservations are found there and taken over.
		messageKey: messageKeyOf(node, send.phone, run.windowMs > 0 ? send.message : `no window|${send.message}`),
		windows,
		countKeys: windows.map((window) => countKeyOf(node, send.phone, window)),
	};
}
