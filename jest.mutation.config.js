/**
 * The tests the mutation run (stryker.config.json) uses: those that exercise the modules it mutates
 * (send records, the spending cap, redaction, the deadline, only-new, reuse, the telephone quota),
 * at the unit and node level. Fewer files than `npx jest`, so that a run fits on a small machine;
 * the tests against real servers (bounds, Redis, n8n) stay in `npx jest` and CI.
 */
const base = require('./jest.config.js');

// The fault-injection property tests run fewer cases per mutant; `npx jest` runs them all.
process.env.PROPERTY_RUNS ??= '30';

module.exports = {
	...base,
	testMatch: [
		'<rootDir>/test/unit/sms-records.test.ts',
		'<rootDir>/test/unit/send-rules.test.ts',
		'<rootDir>/test/transport/sendRecords.test.ts',
		'<rootDir>/test/sms/records-faults.test.ts',
		'<rootDir>/test/unit/transport-pure.test.ts',
		'<rootDir>/test/unit/redact.test.ts',
		'<rootDir>/test/transport/appCodeLeaks.test.ts',
		'<rootDir>/test/unit/deadline.test.ts',
		'<rootDir>/test/unit/across-executions.test.ts',
		'<rootDir>/test/unit/quota-and-reuse.test.ts',
		'<rootDir>/test/unit/only-new.test.ts',
		'<rootDir>/test/unit/descriptions.test.ts',
		'<rootDir>/test/lookups/acrossExecutions.test.ts',
		'<rootDir>/test/outcomes/spendingCap.test.ts',
	],
};
