/**
 * `npm start` against the emulator: puts the emulator's ready-made approved signature and templates
 * into the catalogue the SMS node's Signature and Template lists show, so a new user picks them by
 * name at once instead of meeting an empty list. Written as Import to Catalogue writes them
 * (nodes/shared/store/reviewedCatalogue.ts), into the SQLite store file of the sandbox's n8n, keyed
 * by the sandbox credential's account.
 */
import { signatureSchema, templateSchema, type Signature, type Template } from '../nodes/shared/gateway/schemas/sms';
import { nodeSqlite, storeFilePath } from '../nodes/shared/store/hostEnvironment';
import { recordSightings, sightingOf, type CatalogueKind, type Sighting } from '../nodes/shared/store/reviewedCatalogue';
import { SqliteDurableStore } from '../nodes/shared/store/sqliteStore';
import { GatewayClient } from '../nodes/shared/transport/gatewayClient';
import { settingsFromCredentials } from '../nodes/shared/transport/settings';
import type { Emulator } from '../test/emulator/server';

type EmulatorDemo = Emulator['demo'];

/** The demo objects, read from the gateway with the free queries as Import to Catalogue reads them. */
async function readDemo(client: GatewayClient, demo: EmulatorDemo): Promise<Record<CatalogueKind, Sighting[]>> {
	const read = async (kind: CatalogueKind, id: string): Promise<Sighting> => {
		const answer = kind === 'signature' ? await client.call('signatureGet', { id }, signatureSchema) : await client.call('templateGet', { id }, templateSchema);
		return { ...sightingOf(answer.data as Signature | Template, 'import'), id, deleted: false };
	};
	return {
		signature: [await read('signature', demo.signatureId)],
		template: [await read('template', demo.templateId), await read('template', demo.templateWithoutVariablesId)],
	};
}

/**
 * Seeds the demo objects for the account of `baseUrl` and `appCode`, in the store file of the n8n
 * whose user folder is `userFolder` (key names keyed with that n8n's encryption key, as its nodes
 * name them). Returns what it wrote, or why it wrote nothing.
 */
export async function seedDemoCatalogue(userFolder: string, baseUrl: string, appCode: string, demo: EmulatorDemo): Promise<string> {
	const sqlite = nodeSqlite();
	if (!sqlite) return `not seeded: this Node (${process.version}) has no node:sqlite`;
	const client = new GatewayClient(settingsFromCredentials({ baseUrl, appCodeSecret: appCode }));
	const sightings = await readDemo(client, demo);
	// The store finds n8n's folder, store file and encryption key as the nodes inside that n8n do.
	process.env.N8N_USER_FOLDER = userFolder;
	const store = new SqliteDurableStore(sqlite, storeFilePath());
	try {
		for (const kind of ['signature', 'template'] as const) await recordSightings(store, client.accountKey, kind, sightings[kind]);
		const ids = (kind: CatalogueKind) => sightings[kind].map((sighting) => `${sighting.id} "${sighting.name}"`).join(', ');
		return `signature ${ids('signature')}; templates ${ids('template')}`;
	} finally {
		store.close();
	}
}
