import { createHash } from 'crypto';

/** The credential type that holds the account (credentials/DataGatewayApi.credentials.ts, whose linter wants its name written out). */
export const CREDENTIAL_TYPE = 'dataGatewayApi';

/**
 * Names a credential's account (base URL + appCode) without holding the appCode: the key of its
 * limiter, its shared rate in Redis, its answers, spend and send records. 16 hex characters (64 bits).
 */
export function accountKeyOf(baseUrl: string, appCode: string): string {
	return createHash('sha256').update(`${baseUrl}\n${appCode}`).digest('hex').slice(0, 16);
}
