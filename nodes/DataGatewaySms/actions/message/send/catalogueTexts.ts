import type { CatalogueEntry, CatalogueKind } from '../../../../shared/store/reviewedCatalogue';
import { readCatalogue } from '../../../../shared/store/reviewedCatalogue';
import { catalogueAccount, catalogueStore } from '../../catalogue/access';
import { PICKER_VERSION } from '../../catalogue/pickByName';
import type { SendRun } from './sendRun';

type Entries = Map<string, CatalogueEntry>;

/** Each run reads the catalogue once: its items share the answer. */
const readings = new WeakMap<SendRun, Promise<Record<CatalogueKind, Entries> | undefined>>();

async function readBoth(run: SendRun): Promise<Record<CatalogueKind, Entries> | undefined> {
	try {
		const store = await catalogueStore(run.ctx);
		const account = await catalogueAccount(run.ctx);
		const byId = (entries: CatalogueEntry[]) => new Map(entries.filter((entry) => !entry.deleted).map((entry) => [entry.id, entry]));
		return { signature: byId(await readCatalogue(store, account, 'signature')), template: byId(await readCatalogue(store, account, 'template')) };
	} catch {
		// The catalogue is a convenience: without it the length is unknown, as before 1.4.
		return undefined;
	}
}

/**
 * The signature name and template text the catalogue holds (SMS 1.4), for the segments shown in the
 * output and the bill. They may be stale (a template edited on the gateway's website since), so the
 * spending cap and budgets never count with them: they read the gateway (plan.ts knownTexts).
 */
export async function catalogueTexts(run: SendRun, signId: number, templateId: number): Promise<{ signature?: string; template?: string }> {
	if (run.node.typeVersion < PICKER_VERSION) return {};
	let reading = readings.get(run);
	if (!reading) {
		reading = readBoth(run);
		readings.set(run, reading);
	}
	const entries = await reading;
	return {
		signature: entries?.signature.get(String(signId))?.name ?? undefined,
		template: entries?.template.get(String(templateId))?.content ?? undefined,
	};
}
