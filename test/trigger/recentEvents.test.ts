import { isFirstSighting } from '../../nodes/DataGatewaySmsTrigger/recentEvents';

describe('duplicate memory', () => {
	it('forgets an event once its window has passed', () => {
		const start = 1_000_000;
		expect(isFirstSighting('wf|node|webhook|report|T1|1', 60_000, start)).toBe(true);
		expect(isFirstSighting('wf|node|webhook|report|T1|1', 60_000, start + 59_999)).toBe(false);
		expect(isFirstSighting('wf|node|webhook|report|T1|1', 60_000, start + 60_000)).toBe(true);
	});

	it('keys are separate: another node or workflow sees the same event afresh', () => {
		const now = 2_000_000;
		expect(isFirstSighting('wf-a|node|webhook|sign|5|2', 60_000, now)).toBe(true);
		expect(isFirstSighting('wf-b|node|webhook|sign|5|2', 60_000, now)).toBe(true);
		expect(isFirstSighting('wf-a|other|webhook|sign|5|2', 60_000, now)).toBe(true);
	});

	it('stays bounded: past its capacity the oldest events are forgotten first', () => {
		const now = 3_000_000;
		for (let index = 0; index < 20_000; index++) isFirstSighting(`flood-${index}`, 600_000, now);
		expect(isFirstSighting('flood-19999', 600_000, now)).toBe(false);
		expect(isFirstSighting('flood-new', 600_000, now)).toBe(true);
		expect(isFirstSighting('flood-0', 600_000, now)).toBe(true);
	});
});
