import { startEmulator, type Emulator, type EmulatorConfig, type EmulatorOptions } from '../emulator/server';

/**
 * One emulator for the tests of the file or describe block that calls it: started before them,
 * closed after them, and before each one reset and then configured with `everyTest`. `use`
 * receives it once started.
 */
export function useEmulator(use: (emulator: Emulator) => void, options: EmulatorOptions = {}, everyTest?: Partial<EmulatorConfig>): void {
	let emulator: Emulator;
	beforeAll(async () => {
		emulator = await startEmulator(options);
		use(emulator);
	});
	afterAll(async () => await emulator.close());
	beforeEach(() => {
		emulator.reset();
		if (everyTest) emulator.configure(everyTest);
	});
}
