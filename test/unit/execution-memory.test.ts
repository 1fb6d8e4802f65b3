import type { IExecuteFunctions } from 'n8n-workflow';

import { executionMemory, MEMORY_BOUNDS, SharedAnswer, sharedAnswer } from '../../nodes/shared/state/executionMemory';
import { executionMemoryStats, forgetAllExecutionMemory } from '../../nodes/shared/testing';

/** The one thing executionMemory reads of a node's context. */
const contextOf = (executionId: string) => ({ getExecutionId: () => executionId }) as unknown as IExecuteFunctions;

const answer = () => SharedAnswer.of({}, 'run');
const MINUTE = 60_000;

beforeEach(() => {
	jest.useFakeTimers();
	forgetAllExecutionMemory();
});
afterEach(() => {
	forgetAllExecutionMemory();
	jest.useRealTimers();
});

describe('the paid-answer memory is bounded without waiting for a later call', () => {
	it('an execution left idle is forgotten by the timer alone', () => {
		executionMemory(contextOf('idle')).answers.set('question', answer());
		expect(executionMemoryStats()).toEqual({ executions: 1, answers: 1 });
		jest.advanceTimersByTime(MEMORY_BOUNDS.idleMs - MINUTE);
		expect(executionMemoryStats().executions).toBe(1);
		// No call to the memory in between: only the timer runs.
		jest.advanceTimersByTime(2 * MINUTE);
		expect(executionMemoryStats()).toEqual({ executions: 0, answers: 0 });
	});

	it('an execution in use (its answers read) is kept past the idle time', () => {
		const memory = executionMemory(contextOf('busy'));
		memory.answers.set('question', answer());
		for (let minute = 0; minute < 45; minute += 5) {
			jest.advanceTimersByTime(5 * MINUTE);
			memory.answers.get('question');
		}
		expect(executionMemoryStats()).toEqual({ executions: 1, answers: 1 });
		// Forgotten ones start afresh: a re-run of this execution would find the answer.
		expect(executionMemory(contextOf('busy'))).toBe(memory);
	});

	it('above the answer bound, the answers of the executions idle longest go first; sends stay', () => {
		const old = executionMemory(contextOf('old'));
		for (let index = 0; index < MEMORY_BOUNDS.answers - 10; index++) old.answers.set(`q${index}`, answer());
		old.sends.set('item 0', { outcome: Promise.resolve('task-1'), request: {} });
		jest.advanceTimersByTime(MEMORY_BOUNDS.answersIdleMs);
		const recent = executionMemory(contextOf('recent'));
		for (let index = 0; index < 20; index++) recent.answers.set(`q${index}`, answer());
		expect(old.answers.size).toBe(0);
		expect(old.sends.has('item 0')).toBe(true);
		expect(recent.answers.size).toBe(20);
		expect(executionMemoryStats()).toEqual({ executions: 2, answers: 20 });
	});

	it('answers of executions in use are not dropped, even above the bound', () => {
		const first = executionMemory(contextOf('first'));
		for (let index = 0; index < MEMORY_BOUNDS.answers; index++) first.answers.set(`q${index}`, answer());
		const second = executionMemory(contextOf('second'));
		second.answers.set('q', answer());
		expect(first.answers.size).toBe(MEMORY_BOUNDS.answers);
		expect(executionMemoryStats().answers).toBe(MEMORY_BOUNDS.answers + 1);
	});

	it('above the execution bound, the executions idle longest are forgotten whole', () => {
		const oldest = executionMemory(contextOf('oldest'));
		jest.advanceTimersByTime(MEMORY_BOUNDS.executionsIdleMs);
		for (let index = 0; index < MEMORY_BOUNDS.executions; index++) executionMemory(contextOf(`execution ${index}`));
		expect(executionMemoryStats().executions).toBe(MEMORY_BOUNDS.executions);
		expect(executionMemory(contextOf('oldest'))).not.toBe(oldest);
	});
});

describe('a shared answer', () => {
	it('is asked once: askers during the call and after it get the same answer and the run that paid', async () => {
		const answers = executionMemory(contextOf('shared')).answers;
		let calls = 0;
		let answerCall: (value: { city: string }) => void = () => undefined;
		const load = () => {
			calls++;
			return new Promise<{ city: string }>((resolve) => (answerCall = resolve));
		};
		const first = sharedAnswer(answers, 'question', 'run 0', load);
		const during = sharedAnswer(answers, 'question', 'run 1', load);
		answerCall({ city: '北京' });
		const [firstAnswer, duringAnswer] = await Promise.all([first.answer, during.answer]);
		const after = sharedAnswer(answers, 'question', 'run 1', load);
		expect(await after.answer).toBe(firstAnswer);
		expect(duringAnswer).toBe(firstAnswer);
		expect(firstAnswer).toEqual({ city: '北京' });
		expect(calls).toBe(1);
		expect([first.entry.paidByRun, during.entry.paidByRun, after.entry.paidByRun]).toEqual(['run 0', 'run 0', 'run 0']);
	});

	it('is forgotten when its call fails, so that the next asker calls again', async () => {
		const answers = executionMemory(contextOf('failed')).answers;
		const failed = sharedAnswer(answers, 'question', 'run 0', () => Promise.reject(new Error('reset')));
		await expect(failed.answer).rejects.toThrow('reset');
		expect(answers.has('question')).toBe(false);
		const again = sharedAnswer(answers, 'question', 'run 1', () => Promise.resolve('answered'));
		expect(await again.answer).toBe('answered');
		expect(again.entry.paidByRun).toBe('run 1');
	});
});
