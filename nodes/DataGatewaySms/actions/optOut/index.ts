import type { INodeProperties } from 'n8n-workflow';

import * as add from './add.operation';
import * as check from './check.operation';
import { optOutOperationProperty, optOutPhoneProperty } from './optOutRun';
import * as remove from './remove.operation';

export { add, check, remove };

export const description: INodeProperties[] = [optOutOperationProperty, optOutPhoneProperty];
