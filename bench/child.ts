/**
 * A bench child process's whole life: its input as JSON in argv[2], its result as one JSON line on
 * stdout (the parent reads the last line), exit 0; a failure on stderr and exit 1.
 */
export function runChild<Input, Output>(main: (input: Input) => Promise<Output>): void {
	main(JSON.parse(process.argv[2] ?? '{}') as Input).then(
		(result) => {
			console.log(JSON.stringify(result));
			process.exit(0);
		},
		(error: unknown) => {
			console.error(error);
			process.exit(1);
		},
	);
}
