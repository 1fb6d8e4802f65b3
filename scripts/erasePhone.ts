/**
 * `npm run erase-phone -- <number> [redis://… …]`: deletes everything the package keeps about one
 * phone number, in the stores this host's n8n uses (nodes/shared/store/erasePhone.ts): the SQLite
 * file, n8n's queue Redis in queue mode, and each Redis URL given (a credential's Shared Redis URL;
 * its password in DATA_GATEWAY_ERASE_REDIS_PASSWORD when not in the URL). Run it with n8n's own
 * environment (N8N_USER_FOLDER, N8N_ENCRYPTION_KEY or its _FILE, DATA_GATEWAY_STORE_FILE,
 * EXECUTIONS_MODE and QUEUE_BULL_REDIS_*), as the user n8n runs as: the store names keys with a
 * secret derived from n8n's encryption key, so another key finds nothing.
 */
import { erasePhoneEverywhere } from '../nodes/shared/store/erasePhone';
import { nameSecret } from '../nodes/shared/store/nameSecret';

async function main(): Promise<number> {
	const [phone, ...urls] = process.argv.slice(2);
	if (!phone || phone === '--help') {
		console.log('usage: npm run erase-phone -- <phone number> [redis://host:port/db …]');
		return phone ? 0 : 2;
	}
	const password = process.env.DATA_GATEWAY_ERASE_REDIS_PASSWORD;
	const erased = await erasePhoneEverywhere(phone, urls.map((url) => ({ url, ...(password ? { password } : {}) })));
	console.log(`key names from ${nameSecret().source}`);
	if (erased.length === 0) console.log('no store found: no SQLite file here and no Redis given');
	for (const { store, erased: count } of erased) console.log(`${store}: ${count} entr${count === 1 ? 'y' : 'ies'} erased`);
	return 0;
}

main().then(
	(code) => process.exit(code),
	(error: unknown) => {
		console.error(error instanceof Error ? error.message : String(error));
		process.exit(1);
	},
);
