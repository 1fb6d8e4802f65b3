// `@n8n/node-cli`'s default lint config (what `n8n-node lint` applies), run on what ships
// (nodes/, credentials/, package.json) by `npm run lint:n8n`, with inline disables ignored as n8n's
// scanner ignores them. The only rules turned off are the accepted findings, each with its reason.
import { config } from '@n8n/node-cli/eslint';

import { ACCEPTED_FINDINGS } from './scripts/n8n-accepted-findings.mjs';

export default [...config, ...ACCEPTED_FINDINGS.map(({ rule, files }) => ({ files, rules: { [rule]: 'off' } }))];
