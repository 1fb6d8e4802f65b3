/**
 * What the n8n process tells the store: its settings (n8n's own environment variables), its user
 * folder, and whether its Node has `node:sqlite`. The one file of the store that reads the
 * environment and the file system (scripts/n8n-accepted-findings.mjs).
 */
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- this file is where the store meets the host (scripts/n8n-accepted-findings.mjs) */
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

import type { RedisSettings } from './redis/settings';

/** The store file's name in n8n's user folder (`<N8N_USER_FOLDER or home>/.n8n/`). */
export const STORE_FILE_NAME = 'data-gateway-store.sqlite';
/** Puts the SQLite store elsewhere (a local disk when the user folder is on NFS); see README. */
export const STORE_FILE_VARIABLE = 'DATA_GATEWAY_STORE_FILE';

function variable(name: string): string {
	return (process.env[name] ?? '').trim();
}

/** Where the SQLite store lives: DATA_GATEWAY_STORE_FILE, else n8n's user folder. */
export function storeFilePath(): string {
	return variable(STORE_FILE_VARIABLE) || join(variable('N8N_USER_FOLDER') || homedir(), '.n8n', STORE_FILE_NAME);
}

/** Creates the file's folder when missing (a fresh user folder); errors are the caller's to explain. */
export function makeFolderFor(file: string): void {
	mkdirSync(dirname(file), { recursive: true });
}

/**
 * n8n's own queue Redis, when this process runs in queue mode (n8n's QUEUE_BULL_REDIS_* settings,
 * the same defaults as n8n's). A Redis Cluster (QUEUE_BULL_REDIS_CLUSTER_NODES) is not used: the
 * store's scripts need all keys on one server.
 */
export function queueRedisSettings(): RedisSettings | undefined {
	if (variable('EXECUTIONS_MODE') !== 'queue' || variable('QUEUE_BULL_REDIS_CLUSTER_NODES')) return undefined;
	const host = variable('QUEUE_BULL_REDIS_HOST') || 'localhost';
	const port = variable('QUEUE_BULL_REDIS_PORT') || '6379';
	const database = variable('QUEUE_BULL_REDIS_DB') || '0';
	const username = variable('QUEUE_BULL_REDIS_USERNAME');
	const password = variable('QUEUE_BULL_REDIS_PASSWORD');
	const tls = variable('QUEUE_BULL_REDIS_TLS') === 'true';
	const hostPart = host.includes(':') ? `[${host}]` : host;
	const user = username ? `${encodeURIComponent(username)}@` : '';
	return { url: `${tls ? 'rediss' : 'redis'}://${user}${hostPart}:${port}/${database}`, ...(password ? { password } : {}) };
}

/** The part of `node:sqlite` the store uses. */
export interface SqliteStatement {
	get(...parameters: Array<string | number | null>): Record<string, unknown> | undefined;
	run(...parameters: Array<string | number | null>): { changes: number | bigint };
}
export interface SqliteDatabase {
	exec(sql: string): void;
	prepare(sql: string): SqliteStatement;
	close(): void;
	readonly isTransaction?: boolean;
}
export interface SqliteModule {
	DatabaseSync: new (path: string) => SqliteDatabase;
}

let sqliteModule: SqliteModule | null | undefined;

/**
 * Node's built-in SQLite (Node 22.13+, and every Node n8n 2.x runs on), or undefined on a Node
 * without it (n8n 1.x on Node 20): asked for only when needed, so such a Node still loads the package.
 */
export function nodeSqlite(): SqliteModule | undefined {
	if (sqliteModule === undefined) {
		try {
			const load = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
			const loaded = load?.call(process, 'node:sqlite') as SqliteModule | undefined;
			sqliteModule = typeof loaded?.DatabaseSync === 'function' ? loaded : null;
		} catch {
			// An older Node, or one that wants --experimental-sqlite: no SQLite store there.
			sqliteModule = null;
		}
	}
	return sqliteModule ?? undefined;
}

/** The Node version, for a hint that explains why the SQLite store is not used. */
export function nodeVersion(): string {
	return process.version;
}
