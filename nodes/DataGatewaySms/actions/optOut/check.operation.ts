import type { BillKind } from '../../../shared/money/bill';
import { optOutOperation } from './optOutRun';

/** No gateway call: no bill. */
export const bill: BillKind = 'none';

export const { execute } = optOutOperation('check');
