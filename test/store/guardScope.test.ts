/**
 * Issue 41 part A on every store (memory, the SQLite file, a real redis-server): the account's
 * scope and what still counts with it (test/store/guardScopeCases.ts). The pure parts and the moved
 * mark: test/unit/account-scope.test.ts.
 */
import { recordStores } from '../harness/recordStores';
import { guardScopeCases } from './guardScopeCases';

describe.each(recordStores())('on the %s store', (_kind, open) => guardScopeCases(open));
