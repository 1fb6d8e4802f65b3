/** Records a store's updates as they are decided: how many were made, and the writes of each. */
import type { StoreWrite } from '../../nodes/shared/store/durableStore';
import type { MemoryStore } from '../../nodes/shared/store/memoryStore';

export function recordUpdates(store: MemoryStore): { writes: StoreWrite[][]; updates: () => number } {
	const writes: StoreWrite[][] = [];
	const update = store.update.bind(store);
	const spy = jest.spyOn(store, 'update').mockImplementation(async (keys, decide) =>
		await update(keys, (values, now) => {
			const decision = decide(values, now);
			writes.push(decision.writes);
			return decision;
		}),
	);
	return { writes, updates: () => spy.mock.calls.length };
}
