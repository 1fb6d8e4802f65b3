/**
 * What the n8n process tells the store: its settings (n8n's own environment variables), its user
 * folder, and whether its Node has `node:sqlite`. The one file of the store that reads the
 * environment and the file system (scripts/n8n-accepted-findings.mjs).
 */
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- this file is where the store meets the host (scripts/n8n-accepted-findings.mjs) */
import { mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

import { queueRedisFrom, settingFlag, UnreadableSetting } from './redis/n8nSettings';
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
 * One of n8n's own settings as n8n reads it: the variable when set (even empty), else the content
 * of the file its `_FILE` variable names, trimmed (Docker secrets); undefined when neither is set.
 */
export function n8nSetting(name: string): string | undefined {
	if (name in process.env) return process.env[name];
	const file = process.env[`${name}_FILE`];
	if (!file) return undefined;
	let why: string;
	try {
		return readFileSync(file, 'utf8').trim();
	} catch (error) {
		why = (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
	}
	throw new UnreadableSetting(name, `names ${file}, which could not be read (${why})`);
}

/** n8n's own queue Redis when this process runs in queue mode (store/redis/n8nSettings.ts), else undefined. */
export function queueRedisSettings(): RedisSettings | undefined {
	return queueRedisFrom(n8nSetting);
}

/**
 * DATA_GATEWAY_REDIS_NOEVICTION=true: the operator has checked that the Redis keeps every key
 * (maxmemory-policy noeviction) where Redis itself will not say (CONFIG and INFO refused).
 */
export const NOEVICTION_VARIABLE = 'DATA_GATEWAY_REDIS_NOEVICTION';
export function noEvictionConfirmed(): boolean {
	try {
		return settingFlag(n8nSetting(NOEVICTION_VARIABLE), false);
	} catch {
		// An unreadable file confirms nothing.
		return false;
	}
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
