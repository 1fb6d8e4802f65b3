/**
 * Preloaded (`node --require`) into an `n8n execute` process of test/e2e/leaving.ts: when n8n loads
 * the installed package's hostClock.js (the clock of the stores on this host: the SQLite file), its
 * `now` reads the instant (ms since the epoch) written in the file DGW_E2E_CLOCK_FILE, at every
 * call. The test moves the store's clock by writing that file, at a moment it chooses: no sleep.
 * Plain CommonJS: it runs inside n8n's own Node, before any loader.
 */
const Module = require('node:module');
const { readFileSync } = require('node:fs');

const file = process.env.DGW_E2E_CLOCK_FILE;
const PACKAGE_CLOCK = '/n8n-nodes-data-gateway/dist/nodes/shared/store/hostClock.js';

const load = Module.prototype.load;
Module.prototype.load = function (filename) {
	load.call(this, filename);
	if (file && filename.endsWith(PACKAGE_CLOCK)) this.exports.hostClock.now = () => Number(readFileSync(file, 'utf8'));
};
