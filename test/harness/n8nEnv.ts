import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// n8n-core reads its user folder at import time, so point it at a throwaway folder first:
// every harness file imports this module before n8n-core.
process.env.N8N_USER_FOLDER ??= mkdtempSync(join(tmpdir(), 'n8n-harness-'));
process.env.N8N_LOG_LEVEL ??= 'silent';
