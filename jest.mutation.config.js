/**
 * The tests the mutation run (stryker.config.json) uses: those that exercise the modules it mutates
 * (send records, the spending cap, redaction, the deadline, only-new, reuse, the telephone quota).
 * Fewer files than `npx jest`, so that a run fits on a small machine; the dry run checks they pass.
 */
const base = require('./jest.config.js');

module.exports = {
	...base,
	testMatch: [
		'<rootDir>/test/unit/*.test.ts',
		'<rootDir>/test/store/*.test.ts',
		'<rootDir>/test/sms/records*.test.ts',
		'<rootDir>/test/transport/bounds*.test.ts',
		'<rootDir>/test/transport/appCodeLeaks*.test.ts',
		'<rootDir>/test/transport/sendRecords.test.ts',
		'<rootDir>/test/lookups/*.test.ts',
		'<rootDir>/test/outcomes/spendingCap.test.ts',
	],
	// Checks the links between the pages only: it exercises none of the mutated code.
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/docLinks.test.ts'],
};
