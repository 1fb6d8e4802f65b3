/**
 * The SQLite store's file and folder are owner-only: they hold send records and kept answers about
 * people. SQLite gives the -wal and -shm files the mode of the database file, so the file is made
 * (mode 600) before SQLite opens it; files of earlier versions (made with the process umask, often
 * 644) are narrowed when opened.
 */
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the store file's modes (scripts/n8n-accepted-findings.mjs) */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export const FILE_MODE = 0o600;
export const FOLDER_MODE = 0o700;

/** Makes the folder (700 where it is made) and the file (600), and narrows an existing file's, -wal's and -shm's mode to 600. */
export function prepareStoreFile(file: string): void {
	mkdirSync(dirname(file), { recursive: true, mode: FOLDER_MODE });
	closeSync(openSync(file, 'a', FILE_MODE));
	for (const path of [file, `${file}-wal`, `${file}-shm`]) narrowMode(path);
}

function narrowMode(path: string) {
	// Not there (yet): SQLite makes it with the file's mode.
	const mode = statSync(path, { throwIfNoEntry: false })?.mode ?? 0;
	if ((mode & 0o077) !== 0) chmodSync(path, mode & FILE_MODE);
}

/** Whether the store file is there (the erase command does not make one). */
export const storeFileExists = (file: string): boolean => existsSync(file);
