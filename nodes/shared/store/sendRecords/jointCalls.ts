/** One request's answer from a joint call: its own value, or its own error. */
export type JointAnswer<Answer> = { value: Answer } | { error: unknown };

/**
 * Puts requests that come while an earlier group is at work into one group, up to `most` at a
 * time: the sends of a batch that claim while one claim is with the store pay one store update
 * together, not one each. The first group starts once the requests already asked in the same
 * synchronous run have joined it (a batch's first sends start together); no timer; a request
 * never waits for more than the group ahead of it. `work` answers each request of its group on its own.
 */
export class JointCalls<Request, Answer> {
	private waiting: Array<{ request: Request; settle: (answer: JointAnswer<Answer>) => void }> = [];
	private working = false;

	constructor(
		private readonly most: number,
		private readonly work: (requests: Request[]) => Promise<Array<JointAnswer<Answer>>>,
	) {}

	async ask(request: Request): Promise<Answer> {
		const answer = await new Promise<JointAnswer<Answer>>((settle) => {
			this.waiting.push({ request, settle });
			if (!this.working) void this.drain();
		});
		if ('error' in answer) throw answer.error;
		return answer.value;
	}

	private async drain(): Promise<void> {
		this.working = true;
		try {
			await Promise.resolve();
			while (this.waiting.length > 0) {
				const group = this.waiting.splice(0, this.most);
				let answers: Array<JointAnswer<Answer>>;
				try {
					answers = await this.work(group.map(({ request }) => request));
					if (answers.length !== group.length) throw new Error(`A joint call answered ${answers.length} of ${group.length} requests`);
				} catch (error) {
					answers = group.map(() => ({ error }));
				}
				group.forEach(({ settle }, index) => settle(answers[index]));
			}
		} finally {
			this.working = false;
		}
	}
}
