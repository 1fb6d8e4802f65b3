// n8n's own rule sets apply to what ships (nodes/, credentials/, package.json);
// typescript-eslint applies to every TypeScript file, tests and tools included.
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import jsoncParser from 'jsonc-eslint-parser';
import tseslint from 'typescript-eslint';

const shipped = ['nodes/**/*.ts', 'credentials/**/*.ts'];
const communityRules = n8nCommunityNodesPlugin.configs.recommended.rules;

export default tseslint.config(
	{ ignores: ['dist/**', 'node_modules/**', '.n8n-runtime/**', 'coverage/**', 'bench/results/**', 'bench/.build/**', '**/*.local.ts', '.stryker-tmp*/**', 'reports/**'] },
	...tseslint.configs.recommended.map((config) => ({ ...config, files: ['**/*.ts'] })),
	{
		files: ['**/*.ts'],
		rules: {
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
		},
	},
	{
		files: shipped,
		plugins: { '@n8n/community-nodes': n8nCommunityNodesPlugin, 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...communityRules,
			...n8nNodesBase.configs.community.rules,
		},
	},
	{
		files: ['credentials/**/*.ts'],
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// Wants a camelCase slug, which contradicts the same plugin's cred-class-field-documentation-url-not-http-url
			// and the community plugin's credential-documentation-url (both want a URL); no value satisfies all three.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		rules: n8nNodesBase.configs.nodes.rules,
	},
	{
		files: ['package.json'],
		languageOptions: { parser: jsoncParser },
		plugins: { '@n8n/community-nodes': n8nCommunityNodesPlugin, 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...communityRules,
			...n8nNodesBase.configs.community.rules,
			// undici, zod and ioredis are runtime dependencies by design (README, Install), so the package has dependencies.
			'@n8n/community-nodes/no-runtime-dependencies': 'off',
		},
	},
);
