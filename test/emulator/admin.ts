import type { IncomingMessage, ServerResponse } from 'node:http';

import { json, readBody } from './http';
import type { Emulator, ReceivedNotification } from './api';

export const ADMIN_PREFIX = '/__emulator/';

/** The emulator's own HTTP routes under /__emulator/: the ledger, faults, config and pending work, for other processes. */
export async function admin(
	emulator: Emulator,
	notifications: ReceivedNotification[],
	path: string,
	request: IncomingMessage,
	response: ServerResponse,
	query: URLSearchParams,
) {
	const route = `${request.method} ${path.slice(ADMIN_PREFIX.length)}`;
	if (route === 'POST notifications') {
		const text = await readBody(request);
		let body: unknown = text;
		try {
			body = JSON.parse(text);
		} catch {
			// Kept as text: any workflow may post here.
		}
		notifications.push({ receivedAt: new Date().toISOString(), body });
		return json(response, 200, { ok: true, received: notifications.length });
	}
	const body = request.method === 'PUT' || request.method === 'PATCH' ? JSON.parse((await readBody(request)) || '{}') : undefined;
	switch (route) {
		case 'GET ledger':
			return json(response, 200, emulator.ledger());
		case 'DELETE ledger':
			emulator.resetLedger();
			return json(response, 200, { ok: true });
		case 'PUT faults':
			emulator.setFaults(body);
			return json(response, 200, { ok: true });
		case 'DELETE faults':
			emulator.clearFaults();
			return json(response, 200, { ok: true });
		case 'GET config':
			return json(response, 200, { ...emulator.config(), demo: emulator.demo });
		case 'PATCH config':
			emulator.configure(body);
			return json(response, 200, { ...emulator.config(), demo: emulator.demo });
		case 'GET callbacks':
			return json(response, 200, emulator.callbacks());
		case 'POST finish/reviews':
			emulator.finishPending('review', query.get('id') ?? undefined);
			return json(response, 200, { ok: true });
		case 'POST finish/deliveries':
			emulator.finishPending('delivery', query.get('id') ?? undefined);
			return json(response, 200, { ok: true });
		case 'GET notifications':
			return json(response, 200, notifications);
		case 'DELETE notifications':
			notifications.length = 0;
			return json(response, 200, { ok: true });
		case 'POST reset':
			emulator.reset();
			return json(response, 200, { ok: true });
	}
	return json(response, 404, { message: `unknown admin route ${route}` });
}
