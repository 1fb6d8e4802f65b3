import type { MessageSize } from '../checks/sms';
import { priceOf } from './spend';

/**
 * What one SMS costs when delivered: its segments × the price when its text is known, else one
 * segment (the cap then counts one per SMS, which the cap's hint says).
 */
export const smsCostYuan = (size: MessageSize | undefined): number => size?.estimatedCostYuan ?? priceOf('smsSend');
