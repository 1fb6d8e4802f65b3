/** What one try of the node sent, or left with an unknown outcome: named by the error that stops the batch. */
export class BatchOutcomes {
	/** Items sent, with their task IDs; `fresh` when this try sent it (not found from an earlier try), so its record is marked sent. */
	private readonly sent = new Map<number, { taskId: string | null; fresh: boolean }>();
	private readonly unknown = new Map<number, string>();

	sentItem(itemIndex: number, taskId: string | null, fresh: boolean): void {
		this.sent.set(itemIndex, { taskId, fresh });
	}

	unknownItem(itemIndex: number, phone: string): void {
		this.unknown.set(itemIndex, phone);
	}

	/** Items this try sent, with their task IDs. */
	sentByThisTry(): Map<number, string | null> {
		return new Map([...this.sent].filter(([, item]) => item.fresh).map(([itemIndex, item]) => [itemIndex, item.taskId]));
	}

	/** Every item sent, by this try or an earlier one, with its task ID as the error names it. */
	sentItems(): Map<number, string> {
		return new Map([...this.sent].map(([itemIndex, item]) => [itemIndex, item.taskId ?? 'without a task ID']));
	}

	/** Items whose outcome is unknown, with their numbers. */
	unknownItems(): Map<number, string> {
		return this.unknown;
	}
}
