import type { INodeProperties } from 'n8n-workflow';

import { checkKeyword } from '../../shared/checks/keyword';
import type { ItemInput } from '../../shared/n8n/parameters';

/** The Keyword field both enterprise operations ask for; `description` says what it finds there. */
export function keywordField(description: string): INodeProperties {
	return { displayName: 'Keyword', name: 'keyword', type: 'string', required: true, default: '', placeholder: '北京示例科技有限公司', description };
}

/** The item's keyword, checked; `fix` says what the operation wants. */
export function keywordOf(item: ItemInput, fix: string): string {
	const keyword = checkKeyword(item.read('keyword', ''));
	if (!keyword.ok) throw item.fail('Keyword', keyword.value, fix);
	return keyword.value;
}
