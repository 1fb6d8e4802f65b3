import { reviewedOperation, TEMPLATE } from '../reviewed';

export const { description, execute } = reviewedOperation(TEMPLATE, 'update');
