/**
 * docs/retention.md is the one table of what is kept and for how long; each duration there must be
 * the one the code keeps (the constant in the row's last column), and every constant listed here
 * must have its row. A constant changed without the table, or the table without the code, fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { SEEN_DAYS } from '../../nodes/shared/lookups/onlyNew';
import { COUNTER_TTL_MS } from '../../nodes/shared/lookups/telephoneQuota';
import { LEDGER_KEEP_MS } from '../../nodes/shared/money/ledger';
import { MEMORY_BOUNDS } from '../../nodes/shared/state/executionMemory';
import { COUNT_GRACE_MS } from '../../nodes/shared/store/sendRecords/recordValues';
import { SEND_RECORD_MS } from '../../nodes/shared/store/sendRecords/sendRecords';
import { KEEP_SENDS_MS } from '../../nodes/shared/store/sendsByTask';
import { USAGE_KEEP_MS } from '../../nodes/shared/usage/counts';
import { USAGE_DAYS_KEPT } from '../../nodes/shared/usage/report';

const DAY = 24 * 3_600_000;
const CONSTANTS: Record<string, number> = {
	'MEMORY_BOUNDS.idleMs': MEMORY_BOUNDS.idleMs,
	SEND_RECORD_MS,
	COUNT_GRACE_MS,
	KEEP_SENDS_MS,
	'LEDGER_KEEP_MS.execution': LEDGER_KEEP_MS.execution,
	'LEDGER_KEEP_MS.day': LEDGER_KEEP_MS.day,
	'LEDGER_KEEP_MS.month': LEDGER_KEEP_MS.month,
	'USAGE_KEEP_MS.day': USAGE_KEEP_MS.day,
	'USAGE_KEEP_MS.month': USAGE_KEEP_MS.month,
	COUNTER_TTL_MS,
	SEEN_DAYS: SEEN_DAYS * DAY,
};

/** Every way the table may write a duration exactly: "3 days" or "72 hours", "1 minute". */
export function durationTexts(ms: number): string[] {
	const unit = (count: number, name: string) => `${count} ${name}${count === 1 ? '' : 's'}`;
	const texts: string[] = [];
	if (ms % DAY === 0) texts.push(unit(ms / DAY, 'day'));
	if (ms % 3_600_000 === 0) texts.push(unit(ms / 3_600_000, 'hour'));
	if (ms % 60_000 === 0) texts.push(unit(ms / 60_000, 'minute'));
	return texts;
}

/** Whether `cell` states the duration, as a whole phrase ("35 days", not the "5 days" inside it). */
const states = (cell: string, ms: number) => durationTexts(ms).some((text) => new RegExp(`(^|[^0-9])${text}([^a-z]|$)`).test(cell));

function tableRows(): Array<{ kept: string; constant: string }> {
	const page = readFileSync(join(__dirname, '..', '..', 'docs', 'retention.md'), 'utf8');
	return page
		.split('\n')
		.filter((line) => line.startsWith('| ') && !line.startsWith('| ---') && !line.startsWith('| what '))
		.map((line) => line.split('|').map((cell) => cell.trim()))
		.map((cells) => ({ kept: cells[3], constant: cells[5].replace(/`/g, '') }));
}

describe('the retention table (docs/retention.md)', () => {
	it.each(Object.entries(CONSTANTS))('states %s as the code keeps it', (name, ms) => {
		const rows = tableRows().filter((row) => row.constant === name);
		expect(rows.length).toBeGreaterThan(0);
		for (const row of rows) expect([row.kept, states(row.kept, ms)]).toEqual([row.kept, true]);
	});

	it('names only constants the code has, or says why a row has none', () => {
		for (const row of tableRows()) expect(row.constant in CONSTANTS || /^\(.+\)$/.test(row.constant)).toBe(true);
	});

	it('says the days Usage → Get answers for as the usage counts are kept', () => {
		expect(USAGE_DAYS_KEPT * DAY).toBe(USAGE_KEEP_MS.day);
	});

	it('reads a duration only as a whole phrase', () => {
		expect([states('72 hours, or the repeat window', 3 * DAY), states('35 days after', 5 * DAY), states('until removed', 60_000), states('plus 1 minute', 60_000)]).toEqual([true, false, false, true]);
	});
});
