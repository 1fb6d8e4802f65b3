/**
 * `tsx bench/claimLatency.ts`: how long a send's claim waits, as in a bulk send: 2,000 items
 * reserved, then claimed by 10 lanes that each wait 20 ms (the gateway's latency in section 12)
 * after their claim. Prints the lanes' span against the ideal and the claims' waits. STORE=sqlite
 * uses an SQLite file (Node 24), else a redis-server of its own; MARK=1 marks each send with
 * markSentSoon after its wait, as Send does. Used to decide where early marks pay (issue 41).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from 'n8n-workflow';

import type { DurableStore } from '../nodes/shared/store/durableStore';
import { nodeSqlite } from '../nodes/shared/store/hostEnvironment';
import { parseRedisUrl, SharedRedis } from '../nodes/shared/store/redis/connection';
import { RedisDurableStore } from '../nodes/shared/store/redisStore';
import { SendRecords } from '../nodes/shared/store/sendRecords/sendRecords';
import { SqliteDurableStore } from '../nodes/shared/store/sqliteStore';
import { startRedis } from '../scripts/n8n-runtime/queue';

const ITEMS = 2000;
const LANES = 10;
const LATENCY_MS = 20;

async function openStore(): Promise<{ store: DurableStore; close: () => Promise<void> }> {
	if (process.env.STORE === 'sqlite') {
		const sqlite = nodeSqlite();
		if (!sqlite) throw new Error('node:sqlite needs Node 22.5 or later');
		const folder = mkdtempSync(join(tmpdir(), 'dgw-claims-'));
		const store = new SqliteDurableStore(sqlite, join(folder, 'claims.sqlite'));
		return { store, close: async () => (store.close(), rmSync(folder, { recursive: true, force: true })) };
	}
	const redis = await startRedis(() => undefined);
	const connection = new SharedRedis(parseRedisUrl(redis.url));
	await connection.command('CONFIG', ['SET', 'maxmemory-policy', 'noeviction']);
	return { store: new RedisDurableStore(connection, 'the bench Redis', () => 'check the bench Redis'), close: async () => (connection.close(), await redis.stop()) };
}

async function main() {
	process.env.DATA_GATEWAY_STORE_KEY ??= 'bench key '.repeat(4);
	const { store, close } = await openStore();
	const records = new SendRecords(store, { node: 'bench|claims', execution: 'bench', runIndex: 0 }, { limits: { perMinute: 5, perHour: 10, perDay: 20 }, repeatWindowMinutes: 10 });
	await records.reserve(Array.from({ length: ITEMS }, (_, itemIndex) => ({ itemIndex, phone: `139${String(itemIndex).padStart(8, '0')}`, message: `m${itemIndex}` })));
	const waits: number[] = [];
	let next = 0;
	const started = performance.now();
	await Promise.all(
		Array.from({ length: LANES }, async () => {
			while (next < ITEMS) {
				const itemIndex = next++;
				const asked = performance.now();
				await records.claim(itemIndex);
				waits.push(performance.now() - asked);
				await sleep(LATENCY_MS);
				if (process.env.MARK) records.markSentSoon(itemIndex, `task ${itemIndex}`);
			}
		}),
	);
	const span = performance.now() - started;
	await records.markSent(new Map(Array.from({ length: ITEMS }, (_, itemIndex) => [itemIndex, `task ${itemIndex}`])));
	const ended = performance.now() - started;
	waits.sort((a, b) => a - b);
	const at = (share: number) => waits[Math.floor(ITEMS * share)].toFixed(2);
	console.log({ store: store.kind, marks: process.env.MARK ? 'while sending' : 'at the end', spanMs: Math.round(span), withEndMs: Math.round(ended), idealMs: (ITEMS * LATENCY_MS) / LANES, claimWaitMs: { median: at(0.5), p90: at(0.9) } });
	await close();
	process.exit(0);
}
void main();
