/**
 * The secret the store's key names are keyed with (keyName.ts): derived from DATA_GATEWAY_STORE_KEY
 * when set (or its _FILE), else from n8n's own encryption key, found as n8n 1.123 and 2.41 find it
 * (@n8n/config, n8n-core's InstanceSettings): N8N_ENCRYPTION_KEY (or the file
 * N8N_ENCRYPTION_KEY_FILE names), else `encryptionKey` in `<N8N_USER_FOLDER or HOME>/.n8n/config`.
 * Every process of one installation has that key (queue mode requires it), so they all name keys
 * alike; a reader of Redis or of the SQLite file alone does not have it, so a name cannot be traced
 * back by trying every phone number. When none is found (the package run outside n8n: n8n makes
 * its config before it loads nodes), a random key is made once in that folder
 * (`data-gateway-store.key`, mode 600) and shared by the processes that use that folder.
 */
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- finds n8n's encryption key as n8n does (scripts/n8n-accepted-findings.mjs) */
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Overrides n8n's key: the same value on every n8n that shares one store (README). */
export const STORE_KEY_VARIABLE = 'DATA_GATEWAY_STORE_KEY';
/** The fallback key's file, in n8n's folder. */
export const FALLBACK_KEY_FILE = 'data-gateway-store.key';
/** Keeps this package's names apart from anything else keyed with n8n's encryption key. */
const PURPOSE = 'n8n-nodes-data-gateway store key names v1';

export interface NameSecret {
	key: Buffer;
	/** Where the key came from, for the erase command's report (never the key). */
	source: string;
}

let secret: NameSecret | undefined;

/** The secret of this installation, found once per process. */
export function nameSecret(): NameSecret {
	secret ??= findSecret();
	return secret;
}

/** Tests: find it again (after changing the environment). */
export function forgetNameSecret(): void {
	secret = undefined;
}

/** n8n's folder: `<N8N_USER_FOLDER or HOME>/.n8n`, with n8n's own precedence (`??`, then the working folder). */
export function n8nFolder(): string {
	const home = process.platform === 'win32' ? 'USERPROFILE' : 'HOME';
	return join(process.env.N8N_USER_FOLDER ?? process.env[home] ?? process.cwd(), '.n8n');
}

/** n8n's value of a setting: trimmed, surrounding quotes dropped (@n8n/config's normalizeEnvValue). */
const normalized = (value: string) => value.trim().replace(/^(['"])(.*)\1$/, '$2');

function derive(encryptionKey: string, source: string): NameSecret {
	return { key: createHmac('sha256', encryptionKey).update(PURPOSE).digest(), source };
}

/** A setting read as @n8n/config reads it: the variable when set at all, else the file its _FILE variant names. */
function setting(name: string): { value: string; source: string } | undefined {
	if (name in process.env) {
		const value = normalized(process.env[name] ?? '');
		return value ? { value, source: name } : undefined;
	}
	const file = process.env[`${name}_FILE`];
	if (!file) return undefined;
	const value = normalized(readFileSync(file, 'utf8'));
	return value ? { value, source: `${name}_FILE (${file})` } : undefined;
}

function findSecret(): NameSecret {
	// The package's own key first: n8n installations with different encryption keys that share one Redis on purpose.
	const key = setting(STORE_KEY_VARIABLE) ?? setting('N8N_ENCRYPTION_KEY');
	if (key) return derive(key.value, key.source);
	const folder = n8nFolder();
	const config = join(folder, 'config');
	const fromConfig = readConfigKey(config);
	if (fromConfig) return derive(fromConfig, `n8n's settings file ${config}`);
	return derive(fallbackKey(folder), `this package's own key file ${join(folder, FALLBACK_KEY_FILE)} (no n8n encryption key found)`);
}

function readConfigKey(file: string): string | undefined {
	if (!existsSync(file)) return undefined;
	const text = readFileSync(file, 'utf8');
	let parsed: { encryptionKey?: unknown } | undefined;
	try {
		parsed = JSON.parse(text) as { encryptionKey?: unknown };
	} catch {
		parsed = undefined;
	}
	if (!parsed) throw new Error(`n8n's settings file ${file} is not JSON (n8n itself refuses it too): fix it, or set N8N_ENCRYPTION_KEY`);
	return typeof parsed.encryptionKey === 'string' && parsed.encryptionKey ? parsed.encryptionKey : undefined;
}

/** Reads the fallback key, or makes it: linked into place whole, so two processes that race agree on the first. */
function fallbackKey(folder: string): string {
	const file = join(folder, FALLBACK_KEY_FILE);
	if (!existsSync(file)) {
		mkdirSync(folder, { recursive: true, mode: 0o700 });
		const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
		writeFileSync(draft, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
		try {
			linkSync(draft, file);
		} catch {
			// Another process linked its key first (or the folder refuses links): the read below tells.
		} finally {
			rmSync(draft, { force: true });
		}
	}
	const key = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
	if (!key) throw new Error(`The store's key file ${file} could not be made or is empty: set N8N_ENCRYPTION_KEY as n8n has it, or make the folder writable`);
	return key;
}
