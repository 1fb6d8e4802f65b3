import { reviewedOperation, TEMPLATE } from '../signaturesAndTemplates';

export const { description, execute } = reviewedOperation(TEMPLATE, 'delete');
