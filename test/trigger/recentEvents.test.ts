import type { IDataObject } from 'n8n-workflow';

import { isFirstSighting, isFirstSightingIn, MAX_STORED_EVENTS } from '../../nodes/DataGatewaySmsTrigger/recentEvents';

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

describe('duplicate memory in workflow static data (shared by processes through n8n database)', () => {
	it('a second process that loads the saved static data sees the event; another event still starts', () => {
		const now = 4_000_000;
		const savedByFirstProcess: IDataObject = {};
		expect(isFirstSightingIn(savedByFirstProcess, 'wf|node|webhook|report|T1|1', 60_000, now)).toBe(true);
		const loadedBySecondProcess = JSON.parse(JSON.stringify(savedByFirstProcess)) as IDataObject;
		expect(isFirstSightingIn(loadedBySecondProcess, 'wf|node|webhook|report|T1|1', 60_000, now + 10)).toBe(false);
		expect(isFirstSightingIn(loadedBySecondProcess, 'wf|node|webhook|report|T2|1', 60_000, now + 10)).toBe(true);
		expect(isFirstSightingIn(loadedBySecondProcess, 'wf|node|webhook|report|T1|1', 60_000, now + 60_000)).toBe(true);
	});

	it('stores hashed keys only, drops expired ones, and keeps at most MAX_STORED_EVENTS', () => {
		const now = 5_000_000;
		const staticData: IDataObject = {};
		isFirstSightingIn(staticData, 'old-event', 1_000, now);
		for (let index = 0; index < MAX_STORED_EVENTS + 50; index++) isFirstSightingIn(staticData, `event-${index}`, 600_000 + index, now + 2_000);
		const stored = staticData.recentEvents as Record<string, number>;
		expect(Object.keys(stored)).toHaveLength(MAX_STORED_EVENTS);
		expect(JSON.stringify(staticData)).not.toMatch(/event-/);
		// The latest-expiring events stay; the earliest-expiring were dropped first.
		expect(isFirstSightingIn(staticData, `event-${MAX_STORED_EVENTS + 49}`, 600_000, now + 2_000)).toBe(false);
		expect(isFirstSightingIn(staticData, 'event-0', 600_000, now + 2_000)).toBe(true);
	});
});
