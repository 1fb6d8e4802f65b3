import { reviewedOperation, SIGNATURE } from '../signaturesAndTemplates';

export const { description, execute } = reviewedOperation(SIGNATURE, 'update');
