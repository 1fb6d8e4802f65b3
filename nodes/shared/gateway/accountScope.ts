/**
 * Which gateway account a credential's guardrails belong to (issue 41): the opt-out list, the daily
 * and monthly budgets and the telephone quota. The credential's Account field when set (credentials
 * sharing it share them); else the account its App Code opens on its gateway, the Base URL read as
 * one address, so that two accounts on one n8n stay apart. A rotated App Code or a changed address
 * keeps them through n8n's id of the credential (store/guardScope.ts links the scope it used
 * before). docs/credential.md#account says so to users.
 */
import { accountKeyOf } from './account';

/** What a run's guardrails know of its account (GatewayClient.guard). */
export interface GuardAccount {
	/** The scope the guardrails' keys are written under: `account:<name>`, or `gateway:<normalised URL>|<key of the App Code>`. */
	scope: string;
	/** The key the release before issue 41 wrote them under (Base URL as typed × appCode): still honoured. */
	legacy: string;
	/** The credential's id in n8n, to notice when its scope changes; undefined outside n8n's engine. */
	credential?: string;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0']);

/**
 * The Base URL as one gateway has it, whatever its spelling: scheme and host in lower case, a
 * loopback host as 127.0.0.1, the scheme's default port dropped, no trailing slash, no query.
 * A text that is not a URL is only trimmed and lower-cased.
 */
export function normalisedBaseUrl(text: string): string {
	const trimmed = text.trim();
	let url: URL;
	try {
		url = new URL(trimmed);
	} catch {
		return trimmed.toLowerCase().replace(/\/+$/, '');
	}
	const host = LOOPBACK.has(url.hostname.toLowerCase()) ? '127.0.0.1' : url.hostname.toLowerCase();
	// URL drops the scheme's default port itself (https://…:443 has port '').
	const port = url.port ? `:${url.port}` : '';
	const path = url.pathname.replace(/\/+$/, '');
	return `${url.protocol}//${host}${port}${path}`;
}

/** The credential's Account field: trimmed, case and inner spaces folded, so "Acme Prod" and "acme  prod" are one. */
export function accountNameOf(text: unknown): string {
	return String(text ?? '')
		.trim()
		.replace(/\s+/g, ' ')
		.toLowerCase();
}

/** The scope of a credential: its Account when set, else the account its App Code opens on its gateway (never the App Code itself). */
export function guardScopeOf(baseUrl: string, accountName: string, appCode: string): string {
	if (accountName) return `account:${accountName}`;
	const gateway = normalisedBaseUrl(baseUrl);
	return `gateway:${gateway}|${accountKeyOf(gateway, appCode)}`;
}

export function guardAccountOf(settings: { baseUrl: string; appCode: string; accountName?: string }, credential?: string): GuardAccount {
	return {
		scope: guardScopeOf(settings.baseUrl, settings.accountName ?? '', settings.appCode),
		legacy: accountKeyOf(settings.baseUrl, settings.appCode),
		...(credential ? { credential } : {}),
	};
}
