import { TEMPLATE } from '../signaturesAndTemplates';
import { importOperation } from '../catalogue/import';

export const { description, execute, bill } = importOperation(TEMPLATE);
