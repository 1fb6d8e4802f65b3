import type { INodeProperties } from 'n8n-workflow';

import { readmeLink } from './readmeLink';

/**
 * A notice at the top of a node with each operation's price, which the gateway fixes
 * (docs/gateway-api.md, Prices), so the cost is known before the first run and not only from its bill.
 */
export function priceNotice(prices: string, anchor: string): INodeProperties {
	return { displayName: `Prices: ${prices}. ${readmeLink(anchor, 'More')}`, name: 'priceNotice', type: 'notice', default: '' };
}
