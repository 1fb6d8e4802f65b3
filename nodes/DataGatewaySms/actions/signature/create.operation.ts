import { reviewedOperation, SIGNATURE } from '../reviewed';

export const { description, execute } = reviewedOperation(SIGNATURE, 'create');
