/**
 * `npm run emulator`: the gateway emulator on a fixed port, for the sandbox and manual tries. Runs
 * as `node --import tsx` so that Ctrl-C reaches this process alone (see scripts/start.ts).
 */
import { startEmulator } from './server';

function option(name: string, envName: string): string | undefined {
	const index = process.argv.indexOf(`--${name}`);
	return index >= 0 ? process.argv[index + 1] : process.env[envName];
}

function numberOption(name: string, envName: string): number | undefined {
	const value = option(name, envName);
	return value === undefined ? undefined : Number(value);
}

async function main() {
	const emulator = await startEmulator({
		port: numberOption('port', 'EMULATOR_PORT') ?? 8787,
		callbackUrl: option('callback-url', 'EMULATOR_CALLBACK_URL'),
		reviewDelayMs: numberOption('review-delay-ms', 'EMULATOR_REVIEW_DELAY_MS'),
		deliveryDelayMs: numberOption('delivery-delay-ms', 'EMULATOR_DELIVERY_DELAY_MS'),
		deliveryFailureShare: numberOption('failure-share', 'EMULATOR_FAILURE_SHARE'),
	});
	const { demo } = emulator;
	console.log(`Gateway emulator listening on ${emulator.url}`);
	console.log(`  appCode (non-member, 100 free phone lookups a day): ${demo.appCode}`);
	console.log(`  appCode (member, unlimited):                        ${demo.memberAppCode}`);
	console.log(`  approved signature id:                              ${demo.signatureId}`);
	console.log(`  approved template id (variable \${code}):           ${demo.templateId}`);
	console.log(`  approved template id (no variables):                ${demo.templateWithoutVariablesId}`);
	console.log(`  callback URL: ${emulator.config().callbackUrl ?? '(none; set with --callback-url or PATCH /__emulator/config)'}`);
	console.log(`  ledger: GET ${emulator.url}/__emulator/ledger`);
	console.log(`  notifications received (POST to record): GET ${emulator.url}/__emulator/notifications`);
	const stop = async () => {
		await emulator.close();
		process.exit(0);
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
