/**
 * The account usage counts are kept for: the client's account key (gateway/account.ts), the one the
 * send and delivery records carry, so that the SMS Trigger, which has no credential, counts a
 * report under the account that sent it. Budgets, the quota and the opt-out list's size are read
 * under the account's scope (store/guardScope.ts) by Usage → Get itself.
 */
export function usageAccount(client: { readonly accountKey: string }): string {
	return client.accountKey;
}
