/** One measured figure of the bench and its row in REPORT.md's tables, used by run.ts, report.ts and the sections' own files. */
export interface Figure {
	name: string;
	measured: string;
	target: string;
	ratio?: number;
	limit?: number;
	pass: boolean;
	note: string;
}

/** The figure's row under `| measurement | measured | target | result |`. */
export const figureRow = (figure: Figure) => `| ${figure.name} | ${figure.measured} | ${figure.target} | ${figure.pass ? 'met' : 'missed'} (${figure.note}) |`;
