/**
 * The tests the mutation run (stryker.config.json) uses: those that exercise the modules it mutates
 * (send records, the spending cap, redaction, the deadline, only-new, reuse, the telephone quota),
 * mostly at the unit level: each mutant loads the test files that import its module, and a file that
 * starts n8n-core's engine or a Redis costs seconds per mutant on a small machine. The node-level
 * tests of the same code (test/transport/appCodeLeaks, bounds and sendRecords, test/lookups,
 * test/outcomes/spendingCap, test/sms) stay in `npx jest` and CI. So do the fault-injection property
 * tests (test/sms/records-faults): a few random cases per mutant took seconds each and killed by
 * chance; test/unit/send-decisions.test.ts drives each decision path on staged values instead.
 */
const base = require('./jest.config.js');

// Test files that run on every store run on process memory only here (no Redis per mutant).
process.env.DGW_TEST_STORES = 'memory';

// DGW_MUTATION_TESTS=a.test.ts,b.test.ts narrows a run to a module's own tests: a module every test
// touches (store/keyName.ts names every key) would otherwise run most files per mutant.
const only = process.env.DGW_MUTATION_TESTS?.split(',').map((file) => `<rootDir>/${file.trim()}`);

module.exports = {
	...base,
	testMatch: only ?? [
		'<rootDir>/test/unit/sms-records.test.ts',
		'<rootDir>/test/unit/send-records-store.test.ts',
		'<rootDir>/test/unit/owedReleases.test.ts',
		'<rootDir>/test/unit/send-rules.test.ts',
		'<rootDir>/test/unit/send-decisions.test.ts',
		'<rootDir>/test/unit/record-values.test.ts',
		'<rootDir>/test/unit/transport-pure.test.ts',
		'<rootDir>/test/unit/redact.test.ts',
		'<rootDir>/test/unit/deadline.test.ts',
		'<rootDir>/test/unit/across-executions.test.ts',
		'<rootDir>/test/unit/quota-and-reuse.test.ts',
		'<rootDir>/test/unit/only-new.test.ts',
		'<rootDir>/test/unit/spend.test.ts',
		'<rootDir>/test/unit/account-scope.test.ts',
		'<rootDir>/test/unit/sendWindow.test.ts',
		'<rootDir>/test/unit/sendRecordsChunks.test.ts',
		'<rootDir>/test/usage/counts.test.ts',
		'<rootDir>/test/unit/usage-report.test.ts',
		'<rootDir>/test/unit/descriptions.test.ts',
		'<rootDir>/test/unit/redis-eviction-rules.test.ts',
		'<rootDir>/test/unit/leaving.test.ts',
		'<rootDir>/test/store/ledger.test.ts',
		'<rootDir>/test/unit/ledger.test.ts',
		'<rootDir>/test/unit/guard-scope-links.test.ts',
		'<rootDir>/test/unit/known-values-and-joint-calls.test.ts',
		'<rootDir>/test/unit/n8nSettings.test.ts',
		'<rootDir>/test/unit/sendsByTask.test.ts',
		'<rootDir>/test/unit/sends-by-task-index.test.ts',
		'<rootDir>/test/unit/contentChecks.test.ts',
		'<rootDir>/test/store/sqliteStore.test.ts',
		'<rootDir>/test/store/sqliteConnection.test.ts',
		'<rootDir>/test/unit/sqlite-failures.test.ts',
		'<rootDir>/test/store/memoryStore.test.ts',
		'<rootDir>/test/unit/keyName.test.ts',
		'<rootDir>/test/unit/erasePhoneSteps.test.ts',
		'<rootDir>/test/unit/sqlite-sweep.test.ts',
		'<rootDir>/test/unit/knownTexts.test.ts',
	],
};
