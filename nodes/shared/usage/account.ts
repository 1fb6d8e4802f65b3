/**
 * The account usage is counted for: the same scope as the budgets and the opt-out list (the
 * client's account key, gateway/account.ts). The one place to change when that scope changes.
 */
export function usageAccount(client: { readonly accountKey: string }): string {
	return client.accountKey;
}
