/** Tests run TypeScript through ts-jest without type checking; `npm run build` type-checks everything. */
module.exports = {
	testEnvironment: 'node',
	testMatch: ['<rootDir>/test/**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { diagnostics: false }],
	},
	testTimeout: 30000,
};
